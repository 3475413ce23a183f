import { describe, expect, it } from "vitest";
import { newIdentity } from "../../helpers/bap.js";
import { REDIRECT, authorize, pkce, registerClient, token } from "../../helpers/oauth.js";
import { server, person, publicClient, confidential, deviceClient, accessToken, refreshToken, idToken, DEVICE_GRANT, send, FORM, JSON_TYPE, form, expectClean, sweep, FORGED_JWS, GARBAGE_STRINGS, WRONG_TYPES, type Req, type Kind, expectAnswersAsDocumented } from "../../helpers/robustness.js";

/**
 * Robustness sweep, the OAuth endpoints (token, introspection, revocation, userinfo,
 * registration, authorize, end-session, device) and their deep paths: malformed input of every
 * kind gets a clear 4xx, never a 500, a stack trace or a hang (tests/helpers/robustness.ts
 * holds the fixture and the one check).
 */

describe("POST /api/auth/oauth2/token", () => {
  const path = "/api/auth/oauth2/token";

  it("every grant type with missing, repeated, overlong and garbage parameters", async () => {
    const grants = ["authorization_code", "refresh_token", "client_credentials", DEVICE_GRANT, "password", "implicit", "", "\u0000", "x".repeat(10_000)];
    const cases: [string, string, Req, Kind][] = [];
    const pub = publicClient.client_id;
    for (const grant of grants) {
      const g = `grant_type=${JSON.stringify(grant.slice(0, 40))}`;
      cases.push([`${g} alone`, path, { headers: FORM, body: form({ grant_type: grant }) }, "oauth"]);
      cases.push([`${g} public client only`, path, { headers: FORM, body: form({ grant_type: grant, client_id: pub }) }, "oauth"]);
      cases.push([`${g} repeated grant_type`, path, { headers: FORM, body: form([["grant_type", grant], ["grant_type", "refresh_token"], ["client_id", pub]]) }, "oauth"]);
      cases.push([`${g} repeated client_id`, path, { headers: FORM, body: form([["grant_type", grant], ["client_id", pub], ["client_id", confidential.client_id]]) }, "oauth"]);
      cases.push([`${g} array-ish keys`, path, { headers: FORM, body: `grant_type[]=${encodeURIComponent(grant)}&client_id[]=${pub}&code[0]=x&refresh_token[a]=b` }, "oauth"]);
      cases.push([`${g} JSON body with arrays`, path, { headers: JSON_TYPE, body: JSON.stringify({ grant_type: [grant], client_id: [pub], code: ["x"], refresh_token: ["y"] }) }, "oauth"]);
      cases.push([`${g} JSON body with objects`, path, { headers: JSON_TYPE, body: JSON.stringify({ grant_type: { a: grant }, client_id: { id: pub }, code: {}, scope: {} }) }, "oauth"]);
      cases.push([`${g} JSON body with numbers`, path, { headers: JSON_TYPE, body: JSON.stringify({ grant_type: grant, client_id: 1, code: 2, refresh_token: 3, code_verifier: 4, scope: 5, device_code: 6, redirect_uri: 7 }) }, "oauth"]);
      cases.push([`${g} JSON null members`, path, { headers: JSON_TYPE, body: JSON.stringify({ grant_type: grant, client_id: null, code: null, refresh_token: null, device_code: null }) }, "oauth"]);
      for (const value of GARBAGE_STRINGS) {
        const v = JSON.stringify(value.slice(0, 20));
        cases.push([
          `${g} garbage ${v} in every parameter`,
          path,
          {
            headers: FORM,
            body: form({ grant_type: grant, client_id: value, client_secret: value, code: value, code_verifier: value, redirect_uri: value, refresh_token: value, scope: value, device_code: value, resource: value }),
          },
          "oauth",
        ]);
        cases.push([
          `${g} garbage ${v} with a real public client`,
          path,
          { headers: FORM, body: form({ grant_type: grant, client_id: pub, code: value, code_verifier: value, redirect_uri: value, refresh_token: value, scope: value, device_code: value, resource: value }) },
          "oauth",
        ]);
        cases.push([
          `${g} garbage ${v} with a confidential client`,
          path,
          { headers: { ...FORM, authorization: confidential.basic }, body: form({ grant_type: grant, code: value, code_verifier: value, redirect_uri: value, refresh_token: value, scope: value, device_code: value, resource: value }) },
          "oauth",
        ]);
      }
      for (const forged of FORGED_JWS) {
        cases.push([`${g} forged JWS ${forged.slice(0, 30)} as every token`, path, { headers: FORM, body: form({ grant_type: grant, client_id: pub, code: forged, refresh_token: forged, device_code: forged, code_verifier: forged, client_assertion: forged, client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" }) }, "oauth"]);
      }
      cases.push([`${g} a real access token as the refresh token`, path, { headers: FORM, body: form({ grant_type: grant, client_id: pub, refresh_token: accessToken, code: accessToken }) }, "oauth"]);
      cases.push([`${g} the id token as code`, path, { headers: FORM, body: form({ grant_type: grant, client_id: pub, code: idToken, refresh_token: idToken, device_code: idToken }) }, "oauth"]);
    }
    cases.push(["refresh_token repeated with the real one", path, { headers: FORM, body: form([["grant_type", "refresh_token"], ["client_id", publicClient.client_id], ["refresh_token", "nope"], ["refresh_token", refreshToken]]) }, "oauth"]);
    cases.push(["refresh_token scope garbage", path, { headers: FORM, body: form({ grant_type: "refresh_token", client_id: publicClient.client_id, refresh_token: "nope", scope: "openid \u0000 x".repeat(500) }) }, "oauth"]);
    cases.push(["device_code grant for the device client, unknown code", path, { headers: FORM, body: form({ grant_type: DEVICE_GRANT, client_id: deviceClient.client_id, device_code: "nope" }) }, "oauth"]);
    cases.push(["client_credentials with garbage scope and resource", path, { headers: { ...FORM, authorization: confidential.basic }, body: form([["grant_type", "client_credentials"], ["scope", "\ud800 ".repeat(1000)], ["resource", "not a url"], ["resource", "https://x/"]]) }, "oauth"]);
    await sweep(cases);
  }, 60_000);

  it("bodies that are not forms", async () => {
    await sweep([
      ["no body, no content type", path, { method: "POST" }, "oauth"],
      ["empty form", path, { headers: FORM, body: "" }, "oauth"],
      ["empty JSON", path, { headers: JSON_TYPE, body: "" }, "oauth"],
      ["malformed JSON", path, { headers: JSON_TYPE, body: "{grant_type:" }, "oauth"],
      ["JSON array", path, { headers: JSON_TYPE, body: "[]" }, "oauth"],
      ["JSON string", path, { headers: JSON_TYPE, body: '"grant_type=refresh_token"' }, "oauth"],
      ["JSON number", path, { headers: JSON_TYPE, body: "42" }, "oauth"],
      ["JSON null", path, { headers: JSON_TYPE, body: "null" }, "oauth"],
      ["JSON __proto__", path, { headers: JSON_TYPE, body: '{"__proto__":{"grant_type":"refresh_token"},"constructor":{"prototype":{}}}' }, "oauth"],
      ["text/plain", path, { headers: { "content-type": "text/plain" }, body: "grant_type=refresh_token" }, "oauth"],
      ["multipart without boundary", path, { headers: { "content-type": "multipart/form-data" }, body: "grant_type=refresh_token" }, "oauth"],
      ["multipart with junk", path, { headers: { "content-type": "multipart/form-data; boundary=x" }, body: "--x\r\nContent-Disposition: form-data; name=grant_type\r\n\r\nrefresh_token\r\n--x--" }, "oauth"],
      ["content type garbage", path, { headers: { "content-type": "\u00ff/\u00fe; charset=🙃".replace("🙃", "x") }, body: "a=b" }, "oauth"],
      ["form with invalid UTF-8 bytes", path, { headers: FORM, body: Buffer.from([0x67, 0x72, 0x61, 0x6e, 0x74, 0x5f, 0x74, 0x79, 0x70, 0x65, 0x3d, 0xff, 0xfe, 0xc0, 0x80]) }, "oauth"],
      ["form with bad percent-encoding", path, { headers: FORM, body: "grant_type=%E0%A4%A&client_id=%zz%&code=%" }, "oauth"],
      ["form of only separators", path, { headers: FORM, body: "&&&===&=&" }, "oauth"],
      ["form with 5000 parameters", path, { headers: FORM, body: Array.from({ length: 5000 }, (_, i) => `p${i}=${i}`).join("&") }, "oauth"],
      ["form with a 900 KB value", path, { headers: FORM, body: form({ grant_type: "authorization_code", client_id: publicClient.client_id, code: "c".repeat(900_000) }) }, "oauth"],
      ["form over the body limit", path, { headers: FORM, body: "a=" + "x".repeat(1_100_000) }, "any"],
      ["JSON with a lone surrogate escape", path, { headers: JSON_TYPE, body: '{"grant_type":"\\ud800","client_id":"\\udfff"}' }, "oauth"],
      ["JSON deeply nested", path, { headers: JSON_TYPE, body: "[".repeat(5000) + "]".repeat(5000) }, "oauth"],
      ["GET instead of POST", `${path}?grant_type=refresh_token`, { method: "GET" }, "any"],
      ["PUT", path, { method: "PUT", headers: FORM, body: "grant_type=refresh_token" }, "any"],
    ]);
  });

  it("bad client authentication headers", async () => {
    const body = form({ grant_type: "client_credentials" });
    const headers = [
      "Basic",
      "Basic ",
      "Basic    ",
      "Basic !!!!not-base64!!!!",
      "Basic " + Buffer.from("no-colon-here").toString("base64"),
      "Basic " + Buffer.from(":").toString("base64"),
      "Basic " + Buffer.from(`${confidential.client_id}:`).toString("base64"),
      "Basic " + Buffer.from(`:${confidential.client_secret}`).toString("base64"),
      "Basic " + Buffer.from(`${confidential.client_id}:wrong`).toString("base64"),
      "Basic " + Buffer.from("%zz:%E0%A4%A").toString("base64"),
      "Basic " + Buffer.from("\u0000:\u0000").toString("base64"),
      "Basic " + Buffer.from([0xff, 0xfe, 0x3a, 0xc0, 0x80]).toString("base64"),
      "Basic " + Buffer.from(`${"a".repeat(4000)}:${"b".repeat(4000)}`).toString("base64"),
      "Basic " + "A".repeat(12_000),
      "Basic " + "=".repeat(100),
      "Basic a b c",
      "basic " + Buffer.from(`${confidential.client_id}:${confidential.client_secret}`).toString("base64").toLowerCase(),
      "Bearer " + accessToken,
      "Bearer",
      "Digest username=x",
      "Basic\t" + Buffer.from("a:b").toString("base64"),
      "x".repeat(12_000),
    ];
    const cases: [string, string, Req, Kind][] = [];
    for (const authorization of headers) {
      const name = `authorization ${JSON.stringify(authorization.slice(0, 40))}${authorization.length > 40 ? `… (${authorization.length})` : ""}`;
      cases.push([`token: ${name}`, path, { headers: { ...FORM, authorization }, body }, "oauth"]);
      cases.push([`token + client_id in body: ${name}`, path, { headers: { ...FORM, authorization }, body: form({ grant_type: "refresh_token", refresh_token: "x", client_id: publicClient.client_id }) }, "oauth"]);
      cases.push([`introspect: ${name}`, "/api/auth/oauth2/introspect", { headers: { ...FORM, authorization }, body: form({ token: accessToken }) }, "oauth"]);
      cases.push([`revoke: ${name}`, "/api/auth/oauth2/revoke", { headers: { ...FORM, authorization }, body: form({ token: "x" }) }, "oauth"]);
    }
    cases.push(["basic and client_secret_post together", path, { headers: { ...FORM, authorization: confidential.basic }, body: form({ grant_type: "client_credentials", client_id: confidential.client_id, client_secret: "other" }) }, "oauth"]);
    cases.push(["secret in body for a basic client, client_id repeated", path, { headers: FORM, body: form([["grant_type", "client_credentials"], ["client_id", confidential.client_id], ["client_id", "x"], ["client_secret", confidential.client_secret!], ["client_secret", "y"]]) }, "oauth"]);
    cases.push(["X-Auth-Token garbage", path, { headers: { ...FORM, "x-auth-token": "garbage|||" }, body: form({ grant_type: "refresh_token", client_id: publicClient.client_id, refresh_token: "x" }) }, "oauth"]);
    cases.push(["header over the server's header limit", path, { headers: { ...FORM, authorization: "Basic " + "A".repeat(70_000) }, body }, "any"]);
    await sweep(cases);
  });
});

describe("introspection and revocation", () => {
  it("token parameters of every shape", async () => {
    const cases: [string, string, Req, Kind][] = [];
    for (const endpoint of ["/api/auth/oauth2/introspect", "/api/auth/oauth2/revoke"]) {
      const auth = { ...FORM, authorization: confidential.basic };
      const tokens = [...FORGED_JWS, ...GARBAGE_STRINGS, accessToken, refreshToken, idToken, `${accessToken}.x`, `${idToken}x`, "x".repeat(10_000)];
      for (const value of tokens) {
        for (const hint of [undefined, "access_token", "refresh_token", "id_token", "\u0000", "x".repeat(5000)]) {
          const fields = { token: value, ...(hint !== undefined ? { token_type_hint: hint } : {}) };
          cases.push([`${endpoint} token=${JSON.stringify(value.slice(0, 30))} hint=${JSON.stringify(hint?.slice(0, 20))}`, endpoint, { headers: auth, body: form(fields) }, "oauth"]);
        }
        cases.push([`${endpoint} public client token=${JSON.stringify(value.slice(0, 30))}`, endpoint, { headers: FORM, body: form({ token: value, client_id: publicClient.client_id }) }, "oauth"]);
        cases.push([`${endpoint} no client token=${JSON.stringify(value.slice(0, 30))}`, endpoint, { headers: FORM, body: form({ token: value }) }, "oauth"]);
      }
      cases.push([`${endpoint} missing token`, endpoint, { headers: auth, body: form({}) }, "oauth"]);
      cases.push([`${endpoint} repeated token`, endpoint, { headers: auth, body: form([["token", accessToken], ["token", "x"]]) }, "oauth"]);
      cases.push([`${endpoint} array-ish token`, endpoint, { headers: auth, body: "token[]=a&token[]=b&token_type_hint[x]=y" }, "oauth"]);
      cases.push([`${endpoint} JSON token as array`, endpoint, { headers: { ...JSON_TYPE, authorization: confidential.basic }, body: JSON.stringify({ token: [accessToken] }) }, "oauth"]);
      cases.push([`${endpoint} JSON token as object`, endpoint, { headers: { ...JSON_TYPE, authorization: confidential.basic }, body: JSON.stringify({ token: { a: 1 }, token_type_hint: 5 }) }, "oauth"]);
      cases.push([`${endpoint} JSON token as number`, endpoint, { headers: { ...JSON_TYPE, authorization: confidential.basic }, body: JSON.stringify({ token: 12345, token_type_hint: ["access_token"] }) }, "oauth"]);
      cases.push([`${endpoint} malformed JSON`, endpoint, { headers: { ...JSON_TYPE, authorization: confidential.basic }, body: "{" }, "oauth"]);
      cases.push([`${endpoint} text/plain`, endpoint, { headers: { "content-type": "text/plain", authorization: confidential.basic }, body: "token=x" }, "oauth"]);
      cases.push([`${endpoint} no body`, endpoint, { method: "POST", headers: { authorization: confidential.basic } }, "oauth"]);
      cases.push([`${endpoint} invalid UTF-8`, endpoint, { headers: auth, body: Buffer.concat([Buffer.from("token="), Buffer.from([0xff, 0xfe, 0xfd])]) }, "oauth"]);
      cases.push([`${endpoint} GET`, `${endpoint}?token=x`, { method: "GET" }, "any"]);
    }
    await sweep(cases);
  }, 30_000);
});

describe("GET /api/auth/oauth2/userinfo", () => {
  it("Authorization header variants", async () => {
    const values = [
      "Bearer",
      "Bearer ",
      "Bearer  x",
      "Bearer x y",
      "bearer " + accessToken,
      "BEARER " + accessToken,
      `Bearer ${accessToken} `,
      `Bearer  ${accessToken}`,
      "Basic " + Buffer.from("a:b").toString("base64"),
      confidential.basic,
      "Bearer " + idToken,
      "Bearer " + refreshToken,
      "Bearer " + person.token,
      "Bearer " + "x".repeat(10 * 1024),
      "Bearer " + "a.".repeat(5 * 1024) + "a",
      ...FORGED_JWS.map((t) => `Bearer ${t}`),
      "Bearer \u00ff\u00fe",
      "DPoP " + accessToken,
      "x",
      "",
    ];
    const cases: [string, string, Req, Kind][] = [];
    for (const authorization of values) {
      const name = JSON.stringify(authorization.slice(0, 50));
      cases.push([`GET userinfo authorization ${name}`, "/api/auth/oauth2/userinfo", { headers: { authorization } }, "oauth"]);
      cases.push([`POST userinfo authorization ${name}`, "/api/auth/oauth2/userinfo", { method: "POST", headers: { authorization } }, "oauth"]);
    }
    cases.push(["userinfo without a header", "/api/auth/oauth2/userinfo", {}, "oauth"]);
    cases.push(["userinfo access_token in query", `/api/auth/oauth2/userinfo?access_token=${encodeURIComponent(FORGED_JWS[4]!)}`, {}, "oauth"]);
    cases.push(["userinfo access_token in form", "/api/auth/oauth2/userinfo", { headers: FORM, body: form({ access_token: FORGED_JWS[4]! }) }, "oauth"]);
    cases.push(["userinfo repeated Authorization", "/api/auth/oauth2/userinfo", { headers: { authorization: `Bearer ${accessToken}, Bearer x` } }, "oauth"]);
    cases.push(["userinfo with a garbage session cookie", "/api/auth/oauth2/userinfo", { headers: { cookie: "better-auth.session_token=garbage.sig" } }, "oauth"]);
    await sweep(cases);
  });
});

describe("POST /api/auth/oauth2/register", () => {
  const path = "/api/auth/oauth2/register";
  const valid = {
    client_name: "Robust",
    redirect_uris: [REDIRECT],
    token_endpoint_auth_method: "none",
    grant_types: ["authorization_code"],
    response_types: ["code"],
  };
  const fields = [
    "client_name",
    "redirect_uris",
    "post_logout_redirect_uris",
    "token_endpoint_auth_method",
    "grant_types",
    "response_types",
    "scope",
    "client_uri",
    "logo_uri",
    "tos_uri",
    "policy_uri",
    "contacts",
    "software_id",
    "software_version",
    "software_statement",
    "jwks",
    "jwks_uri",
    "application_type",
    "subject_type",
    "type",
    "disabled",
    "skip_consent",
    "enable_end_session",
    "require_pkce",
    "metadata",
    "client_id",
    "client_secret",
    "client_secret_expires_at",
    "member_pubkey",
    "owner_bap_id",
    "id_token_signed_response_alg",
    "userinfo_signed_response_alg",
    "default_max_age",
    "require_auth_time",
  ];

  it("wrong types in every metadata field", async () => {
    const cases: [string, string, Req, Kind][] = [];
    for (const field of fields) {
      for (const value of WRONG_TYPES) {
        cases.push([`register ${field}=${JSON.stringify(value)?.slice(0, 30)}`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, [field]: value }) }, "oauth"]);
      }
      cases.push([`register ${field} odd unicode`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, [field]: "\u0000\u202e\ufeff💥" }).replace("\\u0000", "\\ud800\\u0000") }, "oauth"]);
    }
    await sweep(cases);
  }, 60_000);

  it("huge arrays, bad redirect URIs, member key garbage", async () => {
    const badUris = ["not a url", "", "javascript:alert(1)", "data:text/html,x", "http://evil.example.com/cb", "https://x/cb#frag", "https://", "//x/cb", "http://[::1", "https://x/\u0000", "https://xn--/", "https://" + "a".repeat(5000) + ".com/", "file:///etc/passwd", "HTTPS://RP.EXAMPLE.COM/CB", "https://user:pass@x/cb", "http://localhost:99999/cb", "custom.scheme:/cb", "https://x/%zz"];
    const cases: [string, string, Req, Kind][] = [];
    for (const uri of badUris) {
      const name = JSON.stringify(uri.slice(0, 40));
      cases.push([`register redirect_uris [${name}]`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, redirect_uris: [uri] }) }, "oauth"]);
      cases.push([`register web redirect_uris [${name}]`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, application_type: "web", redirect_uris: [uri] }) }, "oauth"]);
      cases.push([`register post_logout_redirect_uris [${name}]`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, post_logout_redirect_uris: [uri] }) }, "oauth"]);
      cases.push([`register client_uri ${name}`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, client_uri: uri, logo_uri: uri, jwks_uri: uri }) }, "oauth"]);
    }
    const big = (n: number, f: (i: number) => unknown) => Array.from({ length: n }, (_, i) => f(i));
    cases.push(["register 10000 redirect URIs", path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, redirect_uris: big(10_000, (i) => `http://127.0.0.1:9999/cb${i}`) }) }, "oauth"]);
    cases.push(["register 10000 grant types", path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, grant_types: big(10_000, () => "authorization_code") }) }, "oauth"]);
    cases.push(["register 10000 contacts", path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, contacts: big(10_000, (i) => `a${i}@example.com`) }) }, "oauth"]);
    cases.push(["register nested arrays", path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, redirect_uris: [[REDIRECT]], grant_types: [["authorization_code"]], response_types: [{}] }) }, "oauth"]);
    cases.push(["register empty arrays", path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, redirect_uris: [], grant_types: [], response_types: [] }) }, "oauth"]);
    cases.push(["register unknown grant type", path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, grant_types: ["urn:x", "\u0000"] }) }, "oauth"]);
    cases.push(["register scope 10000 words", path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, scope: big(10_000, (i) => `s${i}`).join(" ") }) }, "oauth"]);
    cases.push(["register client_name 100 KB", path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, client_name: "n".repeat(100_000) }) }, "oauth"]);
    cases.push(["register body 900 KB", path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, metadata: { x: "y".repeat(900_000) } }) }, "oauth"]);

    const id = newIdentity();
    const keys = ["", "00", "zz", "02" + "0".repeat(64), "04" + "a".repeat(128), "02" + "f".repeat(64), id.pubkey.toUpperCase(), id.pubkey + "00", id.pubkey.slice(0, 20), "x".repeat(10_000), "\u0000"];
    for (const key of keys) {
      cases.push([`register member_pubkey ${JSON.stringify(key.slice(0, 30))}`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, member_pubkey: key }) }, "oauth"]);
      cases.push([`register member_pubkey ${JSON.stringify(key.slice(0, 30))} + owner_bap_id garbage`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, member_pubkey: key, owner_bap_id: "not-a-bap-id" }) }, "oauth"]);
    }
    cases.push([`register owner_bap_id without member key`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, owner_bap_id: id.bapId }) }, "oauth"]);
    cases.push([`register owner_bap_id not matching key`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, member_pubkey: id.pubkey, owner_bap_id: newIdentity().bapId }) }, "oauth"]);
    cases.push([`register owner_bap_id huge`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, member_pubkey: id.pubkey, owner_bap_id: "1".repeat(50_000) }) }, "oauth"]);
    await sweep(cases);
  }, 60_000);

  it("bodies that are not JSON objects", async () => {
    await sweep([
      ["register malformed JSON", path, { headers: JSON_TYPE, body: "{" }, "oauth"],
      ["register empty body", path, { headers: JSON_TYPE, body: "" }, "oauth"],
      ["register no body", path, { method: "POST" }, "oauth"],
      ["register array", path, { headers: JSON_TYPE, body: "[]" }, "oauth"],
      ["register number", path, { headers: JSON_TYPE, body: "1" }, "oauth"],
      ["register string", path, { headers: JSON_TYPE, body: '"x"' }, "oauth"],
      ["register null", path, { headers: JSON_TYPE, body: "null" }, "oauth"],
      ["register __proto__", path, { headers: JSON_TYPE, body: JSON.stringify(valid).replace("{", '{"__proto__":{"token_endpoint_auth_method":"client_secret_basic"},') }, "oauth"],
      ["register form body", path, { headers: FORM, body: form({ client_name: "x", redirect_uris: REDIRECT }) }, "oauth"],
      ["register text/plain", path, { headers: { "content-type": "text/plain" }, body: JSON.stringify(valid) }, "oauth"],
      ["register invalid UTF-8", path, { headers: JSON_TYPE, body: Buffer.concat([Buffer.from('{"client_name":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","redirect_uris":["' + REDIRECT + '"]}')]) }, "oauth"],
      ["register lone surrogate", path, { headers: JSON_TYPE, body: JSON.stringify(valid).replace('"Robust"', '"\\ud800"') }, "oauth"],
      ["register over the body limit", path, { headers: JSON_TYPE, body: JSON.stringify({ x: "y".repeat(1_100_000) }) }, "any"],
      ["register with a bearer garbage", path, { headers: { ...JSON_TYPE, authorization: `Bearer ${FORGED_JWS[4]}` }, body: JSON.stringify(valid) }, "oauth"],
      ["register with a garbage cookie", path, { headers: { ...JSON_TYPE, cookie: "better-auth.session_token=%zz" }, body: JSON.stringify(valid) }, "oauth"],
    ]);
  });
});

describe("GET /api/auth/oauth2/authorize", () => {
  const path = "/api/auth/oauth2/authorize";
  it("garbage query parameters, signed in and not", async () => {
    const { challenge } = pkce();
    const base = { response_type: "code", client_id: publicClient.client_id, redirect_uri: REDIRECT, scope: "openid", state: "s", code_challenge: challenge, code_challenge_method: "S256" };
    const queries: string[] = [
      "",
      "client_id=",
      "client_id=nope",
      "client_id=%zz",
      "client_id=%E0%A4%A",
      `client_id=${"x".repeat(6000)}`,
      "response_type=code&client_id[]=x",
      "a=%00&b=%ud800",
    ];
    for (const [key] of Object.entries(base)) {
      for (const value of ["", "\u0000", "\ud83d", "x".repeat(6000), "%zz", "token id_token", "none"]) {
        queries.push(new URLSearchParams({ ...base, [key]: value }).toString());
      }
      queries.push(new URLSearchParams([...Object.entries(base), [key, "second"]]).toString());
    }
    const extras: Record<string, string>[] = [
      { prompt: "login consent none select_account bogus" },
      { prompt: "\u0000" },
      { max_age: "-1" },
      { max_age: "1e309" },
      { max_age: "NaN" },
      { max_age: "x".repeat(500) },
      { nonce: "n".repeat(6000) },
      { request: FORGED_JWS[4]! },
      { request_uri: "urn:ietf:params:oauth:request_uri:nope" },
      { id_token_hint: FORGED_JWS[4]! },
      { login_hint: "\u0000" },
      { ui_locales: "💥" },
      { resource: "not a url" },
      { claims: "{not json" },
      { response_mode: "form_post" },
      { response_mode: "\u0000" },
      { code_challenge: "short" },
      { code_challenge_method: "S512" },
      { scope: "openid ".repeat(2000) },
      { scope: "offline_access" },
      { exp: "1", sig: "garbage" },
    ];
    for (const extra of extras) {
      queries.push(new URLSearchParams({ ...base, ...extra }).toString());
    }
    const cases: [string, string, Req, Kind][] = [];
    for (const q of queries) {
      const name = q.slice(0, 80);
      cases.push([`authorize (anonymous) ?${name}`, `${path}?${q}`, {}, "any"]);
      cases.push([`authorize (signed in) ?${name}`, `${path}?${q}`, { headers: { cookie: person.cookie } }, "any"]);
      cases.push([`authorize (signed in, html) ?${name}`, `${path}?${q}`, { headers: { cookie: person.cookie, accept: "text/html" } }, "any"]);
    }
    cases.push(["authorize POST form", path, { headers: { ...FORM, cookie: person.cookie }, body: form(base) }, "any"]);
    cases.push(["authorize POST JSON array", path, { headers: { ...JSON_TYPE, cookie: person.cookie }, body: "[]" }, "any"]);
    cases.push(["authorize with a garbage cookie", `${path}?${new URLSearchParams(base)}`, { headers: { cookie: "better-auth.session_token=a.b; better-auth.session_data=%zz" } }, "any"]);
    await sweep(cases);
  }, 60_000);

  it("consent and continue endpoints with garbage", async () => {
    const cases: [string, string, Req, Kind][] = [];
    for (const body of [{}, { accept: "yes" }, { accept: true }, { accept: true, oauth_query: "" }, { accept: true, oauth_query: "a=%zz" }, { accept: true, oauth_query: ["x"] }, { accept: [], oauth_query: {} }, { accept: true, oauth_query: "client_id=x&sig=y&exp=1" }, { accept: true, scope: 5, oauth_query: "x".repeat(100_000) }]) {
      cases.push([`consent ${JSON.stringify(body).slice(0, 60)}`, "/api/auth/oauth2/consent", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify(body) }, "any"]);
      cases.push([`continue ${JSON.stringify(body).slice(0, 60)}`, "/api/auth/oauth2/continue", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify({ ...body, selected: "x", created: 1, postLogin: {} }) }, "any"]);
    }
    cases.push(["consent malformed JSON", "/api/auth/oauth2/consent", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: "{" }, "any"]);
    cases.push(["consent anonymous", "/api/auth/oauth2/consent", { headers: JSON_TYPE, body: JSON.stringify({ accept: true, oauth_query: "x=y" }) }, "any"]);
    await sweep(cases);
  });
});

describe("GET /api/auth/oauth2/end-session", () => {
  it("id_token_hint, redirect and client garbage", async () => {
    const path = "/api/auth/oauth2/end-session";
    const hints = [...FORGED_JWS, "", "x".repeat(10_000), accessToken, refreshToken, idToken + "x", "%zz"];
    const cases: [string, string, Req, Kind][] = [];
    for (const hint of hints) {
      const extras: Record<string, string>[] = [{}, { client_id: confidential.client_id }, { client_id: "nope" }, { post_logout_redirect_uri: "https://evil.example.com/", state: "s" }, { post_logout_redirect_uri: "not a url", client_id: publicClient.client_id }];
      for (const extra of extras) {
        const q = new URLSearchParams({ id_token_hint: hint, ...extra }).toString();
        cases.push([`end-session ?${q.slice(0, 80)}`, `${path}?${q}`, {}, "any"]);
        cases.push([`end-session (signed in) ?${q.slice(0, 80)}`, `${path}?${q}`, { headers: { cookie: person.cookie } }, "any"]);
      }
    }
    cases.push(["end-session repeated id_token_hint", `${path}?id_token_hint=${idToken}&id_token_hint=x`, {}, "any"]);
    cases.push(["end-session with the real hint and a bad redirect", `${path}?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: "javascript:alert(1)" })}`, {}, "any"]);
    cases.push(["end-session no params", path, {}, "any"]);
    cases.push(["end-session POST form garbage", path, { headers: FORM, body: "id_token_hint=%zz&id_token_hint[]=1" }, "any"]);
    cases.push(["end-session POST JSON wrong types", path, { headers: JSON_TYPE, body: JSON.stringify({ id_token_hint: 1, client_id: [], post_logout_redirect_uri: {} }) }, "any"]);
    cases.push(["end-session/confirm garbage", "/api/auth/oauth2/end-session/confirm", { headers: JSON_TYPE, body: JSON.stringify({ accept: "x", id_token_hint: [] }) }, "any"]);
    await sweep(cases);
  });
});

describe("device authorization", () => {
  it("device code, verification, approve and deny", async () => {
    const cases: [string, string, Req, Kind][] = [];
    const code = "/api/auth/device/code";
    for (const body of [
      form({}),
      form({ client_id: "nope" }),
      form({ client_id: deviceClient.client_id, scope: "\u0000".repeat(100) }),
      form({ client_id: publicClient.client_id }),
      form([["client_id", deviceClient.client_id], ["client_id", "x"]]),
      form({ client_id: "x".repeat(100_000) }),
      "client_id[]=a&scope[x]=b",
      "client_id=%zz",
    ]) {
      cases.push([`device/code form ${body.slice(0, 60)}`, code, { headers: FORM, body }, "oauth"]);
    }
    for (const body of ["{", "[]", "null", JSON.stringify({ client_id: 1 }), JSON.stringify({ client_id: [deviceClient.client_id] }), JSON.stringify({ client_id: {}, scope: [] })]) {
      cases.push([`device/code JSON ${body.slice(0, 60)}`, code, { headers: JSON_TYPE, body }, "oauth"]);
    }
    cases.push(["device/code text/plain", code, { headers: { "content-type": "text/plain" }, body: "client_id=x" }, "oauth"]);
    cases.push(["device/code no body", code, { method: "POST" }, "oauth"]);
    cases.push(["device/code bad basic", code, { headers: { ...FORM, authorization: "Basic !!!" }, body: form({ client_id: deviceClient.client_id }) }, "oauth"]);

    for (const userCode of ["", "x", "\u0000", "%zz", "💥💥", "x".repeat(10_000), "ABCD-EFGH", "abcd efgh"]) {
      const q = `user_code=${encodeURIComponent(userCode)}`;
      cases.push([`GET /api/auth/device ?${q.slice(0, 50)}`, `/api/auth/device?${q}`, {}, "any"]);
      cases.push([`GET /api/auth/device (signed in) ?${q.slice(0, 50)}`, `/api/auth/device?${q}`, { headers: { cookie: person.cookie } }, "any"]);
      cases.push([`GET /device page ?${q.slice(0, 50)}`, `/device?${q}`, { headers: { cookie: person.cookie } }, "any"]);
      cases.push([`POST /device page user_code=${q.slice(0, 50)}`, "/device", { headers: { ...FORM, cookie: person.cookie }, body: form({ user_code: userCode, action: "approve" }) }, "any"]);
    }
    cases.push(["GET /api/auth/device repeated user_code", "/api/auth/device?user_code=a&user_code=b", { headers: { cookie: person.cookie } }, "any"]);
    cases.push(["GET /api/auth/device no user_code", "/api/auth/device", { headers: { cookie: person.cookie } }, "any"]);
    cases.push(["POST /device page garbage form", "/device", { headers: { ...FORM, cookie: person.cookie }, body: "user_code[]=1&user_code=%zz&action=%00" }, "any"]);
    cases.push(["POST /device page JSON", "/device", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: '{"user_code":[1]}' }, "any"]);
    for (const action of ["approve", "deny"]) {
      const p = `/api/auth/device/${action}`;
      for (const body of [{}, { userCode: 1 }, { userCode: [] }, { userCode: {} }, { userCode: "nope" }, { userCode: "x".repeat(100_000) }, { userCode: "\u0000" }]) {
        cases.push([`${p} ${JSON.stringify(body).slice(0, 50)}`, p, { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify(body) }, "any"]);
        cases.push([`${p} anonymous ${JSON.stringify(body).slice(0, 50)}`, p, { headers: JSON_TYPE, body: JSON.stringify(body) }, "any"]);
      }
      cases.push([`${p} malformed JSON`, p, { headers: { ...JSON_TYPE, cookie: person.cookie }, body: "{" }, "any"]);
      cases.push([`${p} form`, p, { headers: { ...FORM, cookie: person.cookie }, body: "userCode[]=x" }, "any"]);
    }
    await sweep(cases);
  });
});

describe("deep paths: real codes, tokens, consent and device codes with wrong types", () => {
  /** A fresh authorization code for the public client, with its verifier. */
  async function freshCode() {
    const { verifier, challenge } = pkce();
    const auth = await authorize(server, { clientId: publicClient.client_id, cookie: person.cookie, challenge });
    return { code: auth.code!, verifier };
  }
  const tokenPath = "/api/auth/oauth2/token";

  it("authorization_code and refresh_token grants", async () => {
    const variants: ((c: { code: string; verifier: string }) => Record<string, unknown>)[] = [
      ({ code }) => ({ code, code_verifier: ["x"], redirect_uri: REDIRECT }),
      ({ code, verifier }) => ({ code, code_verifier: verifier, redirect_uri: 5 }),
      ({ code, verifier }) => ({ code, code_verifier: verifier, redirect_uri: [REDIRECT] }),
      ({ code, verifier }) => ({ code: [code], code_verifier: verifier, redirect_uri: REDIRECT }),
      ({ code, verifier }) => ({ code, code_verifier: { v: verifier }, redirect_uri: REDIRECT }),
      ({ code, verifier }) => ({ code, code_verifier: verifier, redirect_uri: REDIRECT, resource: [1, {}] }),
      ({ code, verifier }) => ({ code, code_verifier: verifier, redirect_uri: REDIRECT, resource: "not a url" }),
      ({ code, verifier }) => ({ code, code_verifier: verifier, redirect_uri: REDIRECT, scope: 7 }),
      ({ code, verifier }) => ({ code, code_verifier: verifier + "\u0000", redirect_uri: REDIRECT }),
      ({ code, verifier }) => ({ code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: confidential.client_id }),
    ];
    for (const [i, variant] of variants.entries()) {
      const fresh = await freshCode();
      const fields = { grant_type: "authorization_code", client_id: publicClient.client_id, ...variant(fresh) };
      expectClean(`code grant JSON variant ${i} ${JSON.stringify(fields).slice(0, 80)}`, await send(tokenPath, { headers: JSON_TYPE, body: JSON.stringify(fields) }), "oauth");
    }
    const fresh = await freshCode();
    expectClean("code grant repeated code_verifier", await send(tokenPath, { headers: FORM, body: form([["grant_type", "authorization_code"], ["client_id", publicClient.client_id], ["code", fresh.code], ["code_verifier", fresh.verifier], ["code_verifier", "x"], ["redirect_uri", REDIRECT]]) }), "oauth");

    const refreshVariants: ((rt: string) => Record<string, unknown>)[] = [
      (rt) => ({ refresh_token: rt, scope: 5 }),
      (rt) => ({ refresh_token: rt, scope: ["openid"] }),
      (rt) => ({ refresh_token: rt, scope: "openid admin:everything" }),
      (rt) => ({ refresh_token: rt, resource: [{}] }),
      (rt) => ({ refresh_token: rt, resource: "https://x.example/" }),
      (rt) => ({ refresh_token: [rt] }),
      (rt) => ({ refresh_token: rt, client_id: confidential.client_id }),
    ];
    for (const [i, variant] of refreshVariants.entries()) {
      const { code, verifier } = await freshCode();
      const t = await token(server, { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: publicClient.client_id, code_verifier: verifier });
      const fields = { grant_type: "refresh_token", client_id: publicClient.client_id, ...variant(t.json.refresh_token) };
      expectClean(`refresh grant JSON variant ${i} ${JSON.stringify(fields).slice(0, 80)}`, await send(tokenPath, { headers: JSON_TYPE, body: JSON.stringify(fields) }), "oauth");
    }
  });

  it("consent with a real signed query and wrong types", async () => {
    const client = await registerClient(server, { client_name: "Consent Garbage" });
    const { challenge } = pkce();
    const params = { response_type: "code", client_id: client.client_id, redirect_uri: REDIRECT, scope: "openid profile", state: "s", code_challenge: challenge, code_challenge_method: "S256" };
    const bodies = (q: string): unknown[] => [
      { accept: "yes", oauth_query: q },
      { accept: 1, oauth_query: q },
      { accept: true, oauth_query: q, scope: 5 },
      { accept: true, oauth_query: q, scope: ["openid"] },
      { accept: true, oauth_query: q, scope: "openid admin" },
      { accept: true, oauth_query: q, scope: "\u0000" },
      { accept: true, oauth_query: q + "&client_id=other" },
      { accept: true, oauth_query: q.replace(/sig=[^&]+/, "sig=%zz") },
    ];
    for (const body of bodies("placeholder")) {
      const res = await send(`/api/auth/oauth2/authorize?${new URLSearchParams(params)}`, { headers: { cookie: person.cookie } });
      const location = String(res.headers.location ?? res.json?.url ?? "");
      expect(location, res.text).toContain("/consent");
      const q = new URL(location, server.url).search.slice(1);
      const real = JSON.parse(JSON.stringify(body).replace(/placeholder/g, q));
      expectClean(`consent ${JSON.stringify(real).replace(q, "<q>").slice(0, 80)}`, await send("/api/auth/oauth2/consent", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify(real) }), "any");
      expectClean(`continue ${JSON.stringify(real).replace(q, "<q>").slice(0, 80)}`, await send("/api/auth/oauth2/continue", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify({ ...real, selected: [], postLogin: "x" }) }), "any");
    }
  });

  it("device codes: polling and approving with wrong types", async () => {
    const issued = await send("/api/auth/device/code", { headers: FORM, body: form({ client_id: deviceClient.client_id, scope: "openid" }) });
    expect(issued.status, issued.text).toBe(200);
    const { device_code: deviceCode, user_code: userCode } = issued.json;
    await sweep([
      ["poll with the code as array", tokenPath, { headers: JSON_TYPE, body: JSON.stringify({ grant_type: DEVICE_GRANT, client_id: deviceClient.client_id, device_code: [deviceCode] }) }, "oauth"],
      ["poll with another client", tokenPath, { headers: FORM, body: form({ grant_type: DEVICE_GRANT, client_id: publicClient.client_id, device_code: deviceCode }) }, "oauth"],
      ["poll with a repeated code", tokenPath, { headers: FORM, body: form([["grant_type", DEVICE_GRANT], ["client_id", deviceClient.client_id], ["device_code", deviceCode], ["device_code", "x"]]) }, "oauth"],
      ["poll with the user code", tokenPath, { headers: FORM, body: form({ grant_type: DEVICE_GRANT, client_id: deviceClient.client_id, device_code: userCode }) }, "oauth"],
      ["verify with the device code", `/api/auth/device?user_code=${encodeURIComponent(deviceCode)}`, { headers: { cookie: person.cookie } }, "any"],
      ["verify with the user code, lower case", `/api/auth/device?user_code=${encodeURIComponent(userCode.toLowerCase())}`, { headers: { cookie: person.cookie } }, "any"],
      ["approve with the code as array", "/api/auth/device/approve", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify({ userCode: [userCode] }) }, "any"],
      ["approve with the code as object", "/api/auth/device/approve", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify({ userCode: { userCode } }) }, "any"],
      ["deny anonymously", "/api/auth/device/deny", { headers: JSON_TYPE, body: JSON.stringify({ userCode }) }, "any"],
      ["poll with scope garbage", tokenPath, { headers: FORM, body: form({ grant_type: DEVICE_GRANT, client_id: deviceClient.client_id, device_code: deviceCode, scope: "\ud800" }) }, "oauth"],
    ]);
  });
});

describe("the OpenAPI document", () => {
  it("describes every answer of this sweep: route, status, content type and body", expectAnswersAsDocumented, 60_000);
});

import { describe, it } from "vitest";
import { newIdentity, signRequest } from "../../helpers/bap.js";
import { registerClient } from "../../helpers/oauth.js";
import { server, person, publicClient, accessToken, basic, FORM, JSON_TYPE, form, sweep, FORGED_JWS, type Req, type Kind, expectAnswersAsDocumented } from "../../helpers/robustness.js";

/**
 * Robustness sweep, our JSON routes, pages, transport oddities and forged Bitcoin-Auth tokens:
 * malformed input of every kind gets a clear 4xx, never a 500, a stack trace or a hang
 * (tests/helpers/robustness.ts holds the fixture and the one check).
 */

describe("our JSON routes", () => {
  const jsonBodies = ["{", "", "[]", "null", "1", '"x"', "{}", '{"__proto__":{"x":1}}', "[".repeat(3000) + "]".repeat(3000)];
  const bapId = newIdentity().bapId;

  it("/api/backup/*", async () => {
    const cases: [string, string, Req, Kind][] = [];
    const bodies = [
      ...jsonBodies,
      JSON.stringify({ encryptedBackup: 1 }),
      JSON.stringify({ encryptedBackup: [] }),
      JSON.stringify({ encryptedBackup: {} }),
      JSON.stringify({ encryptedBackup: "\u0000" }),
      JSON.stringify({ encryptedBackup: "x", bapId: [] }),
      JSON.stringify({ encryptedBackup: "x", bapId: 1 }),
      JSON.stringify({ encryptedBackup: "x", bapId: "\ud800" }),
      JSON.stringify({ provider: 1, providerAccountId: [] }),
      JSON.stringify({ provider: "credential", providerAccountId: "x" }),
      JSON.stringify({ provider: "google", providerAccountId: "\u0000" }),
      JSON.stringify({ bapId, encryptedBackup: "y".repeat(100) }),
    ];
    const auths: Record<string, string>[] = [
      {},
      { cookie: person.cookie },
      { authorization: `Bearer ${accessToken}` },
      { authorization: `Bearer ${FORGED_JWS[4]}` },
      { authorization: "Bearer" },
      { authorization: "Bitcoin-Auth garbage" },
      { authorization: "Bitcoin-Auth a|b|c|d" },
      { "x-auth-token": "garbage|||" },
    ];
    for (const route of ["/api/backup", "/api/backup/link-oauth", "/api/backup/sync"]) {
      for (const auth of auths) {
        for (const body of bodies) {
          cases.push([`POST ${route} ${JSON.stringify(auth).slice(0, 40)} ${body.slice(0, 50)}`, route, { headers: { ...JSON_TYPE, ...auth }, body, method: "POST" }, "problem"]);
        }
        cases.push([`POST ${route} ${JSON.stringify(auth).slice(0, 40)} text/plain`, route, { headers: { "content-type": "text/plain", ...auth }, body: "{}" }, "problem"]);
        cases.push([`POST ${route} ${JSON.stringify(auth).slice(0, 40)} form`, route, { headers: { ...FORM, ...auth }, body: "encryptedBackup=x" }, "problem"]);
      }
    }
    for (const auth of auths) {
      for (const q of ["", "?bapId=", "?bapId=%zz", "?bapId=a&bapId=b", `?bapId=${bapId}`, `?bapId=${bapId}&oauthId=google|1`, "?oauthId=nobar", "?oauthId=google|%00", "?oauthId=" + "x".repeat(5000), "?bapId[]=x", "?unknown=1"]) {
        for (const route of ["/api/backup", "/api/backup/status", "/api/backup/sync"]) {
          cases.push([`GET ${route}${q.slice(0, 50)} ${JSON.stringify(auth).slice(0, 40)}`, `${route}${q}`, { headers: auth }, "problem"]);
        }
      }
    }
    cases.push(["DELETE /api/backup", "/api/backup", { method: "DELETE", headers: { cookie: person.cookie } }, "problem"]);
    cases.push(["PUT /api/backup/sync", "/api/backup/sync", { method: "PUT", headers: JSON_TYPE, body: "{}" }, "problem"]);
    cases.push(["POST /api/backup over its limit", "/api/backup", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify({ encryptedBackup: "z".repeat(6 * 1024 * 1024) }) }, "problem"]);
    await sweep(cases);
  }, 30_000);

  it("/api/user/* and /api/bap/*", async () => {
    const cases: [string, string, Req, Kind][] = [];
    const userBodies = [
      ...jsonBodies,
      JSON.stringify({ bapId: 1 }),
      JSON.stringify({ bapId: [] }),
      JSON.stringify({ bapId, counter: "1", isPrimary: "yes", name: 5, accountPubkey: [], currentAddress: {}, profile: [] }),
      JSON.stringify({ bapId, counter: 1e308, profile: { identity: "x".repeat(60_000) } }),
      JSON.stringify({ bapId, unknown: 1 }),
      JSON.stringify({ bapId: "\ud800" }),
      JSON.stringify({ bapId, profile: null }),
      JSON.stringify({ bapId, profile: { identity: null } }),
      JSON.stringify({ bapId, txid: 1, profile: { identity: {} } }),
      JSON.stringify({ bapId, txid: "A".repeat(64), profile: { identity: {} }, kind: [], fundedBy: {} }),
      JSON.stringify({ bapId, txid: "a".repeat(64), profile: { identity: {} } }),
    ];
    const auths: Record<string, string>[] = [{}, { cookie: person.cookie }, { cookie: person.cookie, "x-auth-token": "garbage" }, { cookie: person.cookie, "x-auth-token": FORGED_JWS[4]! }, { authorization: `Bearer ${FORGED_JWS[4]}` }];
    for (const route of ["/api/user/bap-ids", "/api/bap/profile", "/api/bap/profile/published"]) {
      for (const auth of auths) {
        for (const body of userBodies) {
          cases.push([`POST ${route} ${JSON.stringify(auth).slice(0, 40)} ${body.slice(0, 50)}`, route, { headers: { ...JSON_TYPE, ...auth }, body, method: "POST" }, "problem"]);
        }
        cases.push([`POST ${route} text/plain`, route, { headers: { "content-type": "text/plain", ...auth }, body: "{}" }, "problem"]);
        cases.push([`POST ${route} over 64 KiB`, route, { headers: { ...JSON_TYPE, ...auth }, body: JSON.stringify({ bapId, profile: { x: "y".repeat(70_000) } }) }, "problem"]);
      }
    }
    for (const q of ["", "?pubkey=", "?pubkey=zz", "?pubkey=%zz", "?pubkey=a&pubkey=b", "?pubkey[]=x", `?pubkey=${"0".repeat(10_000)}`, "?bapId=", "?bapId=%00", `?bapId=${bapId}`, `?bapId=${bapId}&pubkey=${newIdentity().pubkey}`, "?bapId=a&bapId=b"]) {
      for (const route of ["/api/user/bap-ids", "/api/bap/profile", "/api/bap/profile/published"]) {
        cases.push([`GET ${route}${q.slice(0, 50)}`, `${route}${q}`, {}, "problem"]);
        cases.push([`GET ${route}${q.slice(0, 50)} signed in`, `${route}${q}`, { headers: { cookie: person.cookie } }, "problem"]);
      }
      cases.push([`DELETE /api/bap/profile${q.slice(0, 50)}`, `/api/bap/profile${q}`, { method: "DELETE", headers: { cookie: person.cookie } }, "problem"]);
    }
    cases.push(["GET /api/user/unknown", "/api/user/unknown", {}, "problem"]);
    cases.push(["PATCH /api/bap/profile", "/api/bap/profile", { method: "PATCH", headers: { ...JSON_TYPE, cookie: person.cookie }, body: "{}" }, "any"]);
    await sweep(cases);
  }, 30_000);

  it("/api/authorized-apps and /api/agents", async () => {
    const cases: [string, string, Req, Kind][] = [];
    const ids = ["x", "%zz", "%E0%A4%A", "%00", "x".repeat(5000), "..", "%2F..%2F", encodeURIComponent("💥"), "%F0%9F", publicClient.client_id];
    const auths: Record<string, string>[] = [{}, { cookie: person.cookie }, { cookie: "better-auth.session_token=garbage" }, { authorization: `Bearer ${FORGED_JWS[4]}` }, { authorization: `Bearer ${accessToken}` }];
    for (const auth of auths) {
      const who = JSON.stringify(auth).slice(0, 40);
      cases.push([`GET /api/authorized-apps ${who}`, "/api/authorized-apps", { headers: auth }, "problem"]);
      cases.push([`GET /api/agents ${who}`, "/api/agents", { headers: auth }, "problem"]);
      for (const id of ids) {
        cases.push([`DELETE /api/authorized-apps/${id.slice(0, 30)} ${who}`, `/api/authorized-apps/${id}`, { method: "DELETE", headers: auth }, "problem"]);
        for (const route of [`/api/agents/hosts/${id}/pause`, `/api/agents/agents/${id}/resume`, `/api/agents/grants/${id}/revoke`, `/api/agents/hosts/${id}/revoke`]) {
          for (const body of [undefined, "{", "[]", JSON.stringify({ reason: 1 })]) {
            cases.push([`POST ${route.slice(0, 60)} ${who} ${body ?? "(no body)"}`, route, { method: "POST", headers: { ...(body ? JSON_TYPE : {}), ...auth }, body }, "problem"]);
          }
        }
      }
    }
    cases.push(["POST /api/agents/hosts/x/explode", "/api/agents/hosts/x/explode", { method: "POST", headers: { cookie: person.cookie } }, "problem"]);
    cases.push(["POST /api/agents cross-site", "/api/agents/grants/x/revoke", { method: "POST", headers: { cookie: person.cookie, origin: "https://evil.example.com" } }, "problem"]);
    cases.push(["POST /api/authorized-apps", "/api/authorized-apps", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: "{" }, "problem"]);
    await sweep(cases);
  });

  it("/api/wallet/* and /api/auth/wallet/*", async () => {
    const cases: [string, string, Req, Kind][] = [];
    const walletBodies = [
      ...jsonBodies,
      JSON.stringify({ bapId, authToken: 1, provider: [] }),
      JSON.stringify({ bapId, authToken: "a|b|c|d|e", provider: "yours" }),
      JSON.stringify({ bapId, authToken: "x".repeat(5000), provider: "yours" }),
      JSON.stringify({ bapId, provider: "metamask", connectionMethod: "evm", address: "0x" + "1".repeat(40), message: "\ud800", signature: "0x" + "ab".repeat(65) }),
      JSON.stringify({ bapId, walletAddress: {}, depositAddress: 1 }),
      JSON.stringify({ origin: 1, collection: [], minCount: "2" }),
      JSON.stringify({ origin: "a".repeat(64) + "_0", minCount: 1e308 }),
      JSON.stringify({ collection: "x", minCount: -1 }),
    ];
    // An OAuth access token is no session here (spec, per-route authentication): a 401 problem like none.
    const auths: Record<string, string>[] = [{}, { cookie: person.cookie }, { authorization: `Bearer ${accessToken}` }];
    for (const base of ["/api/wallet", "/api/auth/wallet"]) {
      for (const auth of auths) {
        const who = JSON.stringify(auth).slice(0, 40);
        for (const route of ["/connect", "/connect/challenge", "/set-primary", "/set-payment", "/verify-ownership"]) {
          for (const body of walletBodies) cases.push([`POST ${base}${route} ${who} ${body.slice(0, 50)}`, base + route, { headers: { ...JSON_TYPE, ...auth }, body, method: "POST" }, "problem"]);
          cases.push([`POST ${base}${route} ${who} text/plain`, base + route, { headers: { "content-type": "text/plain", ...auth }, body: "{}" }, "problem"]);
        }
        for (const q of ["", "?bapId=", "?bapId=%zz", "?bapId=a&bapId=b", `?bapId=${bapId}`, `?bapId=${bapId}&address=%00`, `?bapId=${bapId}&address=${"x".repeat(5000)}`, "?refresh=yes", "?bapId[]=x"]) {
          for (const route of ["/connect", "/address", "/nfts"]) cases.push([`GET ${base}${route}${q.slice(0, 40)} ${who}`, `${base}${route}${q}`, { headers: auth }, "problem"]);
          cases.push([`DELETE ${base}/connect${q.slice(0, 40)} ${who}`, `${base}/connect${q}`, { method: "DELETE", headers: auth }, "problem"]);
        }
      }
      cases.push([`POST ${base}/connect cross-site`, `${base}/connect`, { method: "POST", headers: { ...JSON_TYPE, cookie: person.cookie, origin: "https://evil.example.com" }, body: "{}" }, "problem"]);
    }
    cases.push(["GET /api/wallet/unknown", "/api/wallet/unknown", { headers: { cookie: person.cookie } }, "problem"]);
    await sweep(cases);
  }, 60_000);

  it("agent-auth endpoints with forged JWTs and wrong types", async () => {
    const cases: [string, string, Req, Kind][] = [];
    const posts = ["/api/auth/agent/register", "/api/auth/capability/execute", "/api/auth/capability/batch-execute", "/api/auth/agent/request-capability", "/api/auth/agent/introspect", "/api/auth/agent/status", "/api/auth/agent/revoke", "/api/auth/agent/rotate-key", "/api/auth/agent/device/code", "/api/auth/agent/ciba/authorize", "/api/auth/agent/approve-capability", "/api/auth/agent/claim", "/api/auth/host/enroll", "/api/auth/host/create", "/api/auth/agent/reactivate"];
    for (const route of posts) {
      for (const authorization of [undefined, ...FORGED_JWS.slice(3, 6).map((t) => `Bearer ${t}`), "Bearer " + "x".repeat(10_000)]) {
        for (const body of ["{", "[]", JSON.stringify({ name: 1, capabilities: "x", capability: [], arguments: "x", token: {}, user_code: 5, agent_id: [], host_id: {}, public_key: 1, jwk: "x" })]) {
          cases.push([`POST ${route} ${authorization?.slice(0, 30) ?? "(none)"} ${body.slice(0, 40)}`, route, { headers: { ...JSON_TYPE, ...(authorization ? { authorization } : {}), cookie: person.cookie }, body }, "any"]);
        }
      }
    }
    for (const route of ["/api/auth/agent-configuration", "/api/auth/capability/list?x=%zz", "/api/auth/capability/describe?name[]=x", "/api/auth/agent/get?agent_id=%00", "/api/auth/agent/session", "/api/auth/agent/list?limit=-1&offset=abc", "/api/auth/host/list", "/api/auth/agent-approval?user_code=" + "x".repeat(100), "/api/auth/agent-approval?user_code=%zz", "/api/auth/agent/ciba/pending"]) {
      cases.push([`GET ${route}`, route, { headers: { cookie: person.cookie, authorization: `Bearer ${FORGED_JWS[4]}` } }, "any"]);
    }
    await sweep(cases);
  });
});

describe("pages and odd paths", () => {
  it("answers garbage on pages and paths with a 4xx", async () => {
    const cases: [string, string, Req, Kind][] = [];
    for (const path of ["/%zz", "/api/%zz", "/api/auth/%zz", "/api/auth/oauth2/%E0%A4%A", "/sign-in?return_to=%zz", "/sign-in?return_to=//evil.example.com", "/consent?client_id[]=x&scope=%00", "/consent?sig=x&exp=abc", "/error?error=%zz&error_description=" + "x".repeat(5000), "/reset-password?token=%00", "/invitations/%zz", "/invitations/" + "x".repeat(3000), "/agents/approve?user_code=%zz", "/sign-in/two-factor?return_to=%00", "/.well-known/%zz", "/api/auth/jwks?x=%zz"]) {
      cases.push([`GET ${path.slice(0, 80)}`, path, { headers: { cookie: person.cookie } }, "any"]);
    }
    // Paths and methods better-auth has no endpoint for: its `{message, code}`, not an empty 404.
    for (const path of ["/api/auth", "/api/auth/", "/api/auth/no-such-endpoint", "/api/auth/%zz/x", "/api/auth/get-session/", "/api/auth//get-session", "/api/auth/token", "/api/auth/" + "x/".repeat(2000), "/api/auth/oauth2/nope?x=%zz&y[]=1"]) {
      cases.push([`GET ${path.slice(0, 80)} (no endpoint)`, path, { headers: { cookie: person.cookie } }, "better-auth"]);
      cases.push([`POST ${path.slice(0, 80)} (no endpoint)`, path, { headers: { ...JSON_TYPE, cookie: person.cookie }, body: "{" }, "better-auth"]);
      cases.push([`PUT ${path.slice(0, 80)} (no endpoint)`, path, { method: "PUT", headers: { ...FORM, cookie: person.cookie }, body: "a=%zz" }, "better-auth"]);
    }
    for (const path of ["/sign-in", "/sign-up", "/consent", "/forgot-password", "/reset-password", "/sign-in/two-factor", "/agents/approve", "/account/profile", "/account/sessions/revoke", "/account/apps/revoke", "/account/apps/agents/revoke", "/account/identities/primary", "/account/organizations/create"]) {
      cases.push([`POST ${path} garbage form`, path, { headers: { ...FORM, cookie: person.cookie }, body: "a[]=1&email=%zz&password=%00&oauth_query=%E0%A4%A&" + "x=".repeat(1000) }, "any"]);
      cases.push([`POST ${path} JSON array`, path, { headers: { ...JSON_TYPE, cookie: person.cookie }, body: "[" }, "any"]);
      cases.push([`POST ${path} invalid UTF-8`, path, { headers: { ...FORM, cookie: person.cookie }, body: Buffer.from([0x61, 0x3d, 0xff, 0xfe]) }, "any"]);
    }
    await sweep(cases);
  });
});

describe("transport oddities on every kind of route", () => {
  it("chunked bodies, bodies on GET, HEAD, OPTIONS, odd methods and content types", async () => {
    const routes: [string, Kind][] = [
      ["/api/auth/oauth2/token", "oauth"],
      ["/api/auth/oauth2/introspect", "oauth"],
      ["/api/auth/oauth2/revoke", "oauth"],
      ["/api/auth/oauth2/register", "oauth"],
      ["/api/auth/oauth2/userinfo", "oauth"],
      ["/api/auth/device/code", "oauth"],
      ["/api/auth/oauth2/authorize", "any"],
      ["/api/auth/oauth2/end-session", "any"],
      ["/api/auth/get-session", "any"],
      ["/api/auth/sign-in/email", "any"],
      ["/api/auth/no-such-endpoint", "better-auth"],
      ["/api/backup", "problem"],
      ["/api/backup/sync", "problem"],
      ["/api/user/bap-ids", "problem"],
      ["/api/bap/profile", "problem"],
      ["/api/authorized-apps", "problem"],
      ["/api/agents", "problem"],
      ["/sign-in", "any"],
      ["/device", "any"],
    ];
    const contentTypes = ["application/json; charset=utf-16", "APPLICATION/JSON", "application/json;", "application/jsonp", "application/merge-patch+json", "application/x-www-form-urlencoded; charset=latin1", "*/*", "", "multipart/form-data; boundary=", "text/html"];
    const cases: [string, string, Req, Kind][] = [];
    for (const [path, kind] of routes) {
      const headers = { cookie: person.cookie };
      cases.push([`${path} chunked JSON`, path, { method: "POST", headers: { ...headers, ...JSON_TYPE }, body: JSON.stringify({ token: "x", grant_type: "refresh_token", encryptedBackup: 1 }), chunked: true }, kind]);
      cases.push([`${path} chunked form`, path, { method: "POST", headers: { ...headers, ...FORM }, body: form({ token: "x", grant_type: "refresh_token", client_id: publicClient.client_id, refresh_token: "x" }), chunked: true }, kind]);
      cases.push([`${path} chunked malformed JSON`, path, { method: "POST", headers: { ...headers, ...JSON_TYPE }, body: "{\"a\":", chunked: true }, kind]);
      cases.push([`${path} chunked over 1 MiB`, path, { method: "POST", headers: { ...headers, ...FORM }, body: "a=" + "x".repeat(1_100_000), chunked: true }, "any"]);
      cases.push([`${path} GET with a JSON body`, path, { method: "GET", headers: { ...headers, ...JSON_TYPE }, body: "{" }, kind]);
      cases.push([`${path} GET with a form body`, path, { method: "GET", headers: { ...headers, ...FORM }, body: "token=x" }, kind]);
      cases.push([`${path} DELETE with a body`, path, { method: "DELETE", headers: { ...headers, ...JSON_TYPE }, body: "[]" }, "any"]);
      cases.push([`${path} HEAD`, path, { method: "HEAD", headers }, "any"]);
      cases.push([`${path} OPTIONS`, path, { method: "OPTIONS", headers: { ...headers, "access-control-request-method": "POST", "access-control-request-headers": "x-\u00ff" } }, "any"]);
      cases.push([`${path} PATCH`, path, { method: "PATCH", headers: { ...headers, ...JSON_TYPE }, body: "{}" }, "any"]);
      cases.push([`${path} FOO`, path, { method: "FOO", headers }, "any"]);
      cases.push([`${path} gzip that is not`, path, { method: "POST", headers: { ...headers, ...JSON_TYPE, "content-encoding": "gzip" }, body: "{}" }, kind]);
      for (const type of contentTypes) {
        cases.push([`${path} content-type ${JSON.stringify(type)}`, path, { method: "POST", headers: { ...headers, "content-type": type }, body: '{"token":"x"}' }, kind]);
      }
      cases.push([`${path} query of 12 KB`, `${path}?${"q=" + "x".repeat(12_000)}`, { headers }, "any"]);
      cases.push([`${path} odd headers`, path, { headers: { ...headers, "x-request-id": "\u00ff".repeat(200), "x-forwarded-for": "garbage, ::zz", "x-idp-client-ip": "not an ip", "accept": "\u00ff/\u00fe", "accept-language": "x".repeat(5000) } }, "any"]);
    }
    await sweep(cases);
  }, 30_000);
});

describe("forged Bitcoin-Auth tokens", () => {
  it("on the member-key token endpoint, backups, identity registration and sigma sign-in", async () => {
    const id = newIdentity();
    const client = await registerClient(server, { member_pubkey: id.pubkey, owner_bap_id: id.bapId });
    const now = new Date().toISOString();
    const forge = (path: string, body?: string) => [
      `${id.pubkey}|brc77|${now}|${path}|`,
      `${id.pubkey}|brc77|${now}|${path}|AAAA`,
      `${id.pubkey}|brc77|${now}|${path}|${Buffer.alloc(200, 0xff).toString("base64")}`,
      `${id.pubkey}|brc77|${now}|${path}|${Buffer.concat([Buffer.alloc(4), Buffer.from(id.pubkey, "hex"), Buffer.alloc(100)]).toString("base64")}`,
      `${id.pubkey}|bsm|${now}|${path}|!!!!`,
      `${id.pubkey}|bsm|${now}|${path}|${Buffer.alloc(65).toString("base64")}`,
      `${id.pubkey}|bsm|not-a-time|${path}|${Buffer.alloc(65).toString("base64")}`,
      `${id.pubkey}|bsm|9999-99-99T99:99:99Z|${path}|AAAA`,
      `02${"0".repeat(64)}|bsm|${now}|${path}|AAAA`,
      `${id.pubkey}|rsa|${now}|${path}|AAAA`,
      `${id.pubkey}|brc77|${now}|${path}|x|y|z`,
      `${id.pubkey}|brc77|${now}|${path}|` + "A".repeat(2000),
      signRequest(id.key, path, body === undefined ? "other body" : body + "x"),
      signRequest(id.key, path + "x", body),
      signRequest(id.key, path, body, { scheme: "bsm", timestamp: "2000-01-01T00:00:00.000Z" }),
      "\u00ff|\u00fe|\u00fd|\u00fc|\u00fb",
      FORGED_JWS[4]!,
    ];
    const cases: [string, string, Req, Kind][] = [];
    const tokenBody = form({ grant_type: "refresh_token", client_id: client.client_id, refresh_token: "x" });
    for (const t of forge("/api/auth/oauth2/token", tokenBody)) {
      cases.push([`member-key token x-auth-token ${t.slice(0, 40)}`, "/api/auth/oauth2/token", { headers: { ...FORM, "x-auth-token": t }, body: tokenBody }, "oauth"]);
    }
    cases.push(["member-key token without x-auth-token", "/api/auth/oauth2/token", { headers: FORM, body: tokenBody }, "oauth"]);
    cases.push(["member-key token JSON", "/api/auth/oauth2/token", { headers: { ...JSON_TYPE, "x-auth-token": "a|b|c|d|e" }, body: JSON.stringify({ grant_type: "refresh_token", client_id: client.client_id, refresh_token: ["x"] }) }, "oauth"]);
    cases.push(["member-key token over 16 KiB", "/api/auth/oauth2/token", { headers: FORM, body: tokenBody + "&pad=" + "x".repeat(20_000) }, "oauth"]);
    cases.push(["member-key token chunked", "/api/auth/oauth2/token", { headers: FORM, body: tokenBody, chunked: true }, "oauth"]);
    cases.push(["member-key token Basic naming it", "/api/auth/oauth2/token", { headers: { ...FORM, authorization: basic(client.client_id, "x") }, body: form({ grant_type: "client_credentials" }) }, "oauth"]);

    const syncBody = JSON.stringify({ bapId: id.bapId, encryptedBackup: "x" });
    for (const t of forge("/api/backup/sync", syncBody)) {
      cases.push([`POST /api/backup/sync ${t.slice(0, 40)}`, "/api/backup/sync", { headers: { ...JSON_TYPE, authorization: `Bitcoin-Auth ${t}` }, body: syncBody }, "problem"]);
      cases.push([`GET /api/backup/sync ${t.slice(0, 40)}`, `/api/backup/sync?bapId=${id.bapId}`, { headers: { authorization: `Bitcoin-Auth ${t}` } }, "problem"]);
    }
    for (const t of forge(`/api/backup?bapId=${id.bapId}`)) {
      cases.push([`GET /api/backup?bapId x-auth-token ${t.slice(0, 40)}`, `/api/backup?bapId=${id.bapId}`, { headers: { "x-auth-token": t } }, "problem"]);
    }
    const regBody = JSON.stringify({ bapId: id.bapId });
    for (const t of forge("/api/user/bap-ids", regBody)) {
      cases.push([`POST /api/user/bap-ids ${t.slice(0, 40)}`, "/api/user/bap-ids", { headers: { ...JSON_TYPE, cookie: person.cookie, "x-auth-token": t }, body: regBody }, "problem"]);
    }
    for (const t of forge("/api/auth/sign-in/sigma", "{}")) {
      cases.push([`POST /api/auth/sign-in/sigma ${t.slice(0, 40)}`, "/api/auth/sign-in/sigma", { headers: { ...JSON_TYPE, "x-auth-token": t }, body: "{}" }, "any"]);
      cases.push([`POST /api/auth/sign-up/sigma ${t.slice(0, 40)}`, "/api/auth/sign-up/sigma", { headers: { ...JSON_TYPE, "x-auth-token": t }, body: JSON.stringify({ name: [], email: 5 }) }, "any"]);
    }
    await sweep(cases);
  });
});

describe("the OpenAPI document", () => {
  it("describes every answer of this sweep: route, status, content type and body", expectAnswersAsDocumented, 60_000);
});

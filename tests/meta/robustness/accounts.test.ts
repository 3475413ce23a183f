import { describe, expect, it } from "vitest";
import { newIdentity, signRequest } from "../../helpers/bap.js";
import { REDIRECT, signUp } from "../../helpers/oauth.js";
import { server, person, accessToken, send, FORM, JSON_TYPE, expectClean, sweep, b64url, FORGED_JWS, type Req, type Kind, expectAnswersAsDocumented } from "../../helpers/robustness.js";

/**
 * Robustness sweep, better-auth's account surface (sessions, wrong types, deep JSON and user
 * fields): malformed input of every kind gets a clear 4xx, never a 500, a stack trace or a
 * hang (tests/helpers/robustness.ts holds the fixture and the one check).
 */

describe("sessions and better-auth's account surface", () => {
  it("GET /api/auth/get-session with garbage cookies and bearers", async () => {
    const sessionToken = person.cookie.match(/better-auth\.session_token=([^;]+)/)?.[1] ?? "";
    const cookies = [
      "better-auth.session_token=",
      "better-auth.session_token=garbage",
      "better-auth.session_token=a.b",
      "better-auth.session_token=%zz",
      "better-auth.session_token=%E0%A4%A",
      `better-auth.session_token=${"x".repeat(6000)}.${"y".repeat(44)}`,
      `better-auth.session_token=${sessionToken}x`,
      `better-auth.session_token=${sessionToken}; better-auth.session_token=x`,
      `better-auth.session_token=${sessionToken}; better-auth.session_data=garbage`,
      `better-auth.session_token=${sessionToken}; better-auth.session_data=${b64url('{"session":null}')}`,
      `better-auth.session_token=${sessionToken}; better-auth.session_data=${b64url("[]")}`,
      `better-auth.session_token=${sessionToken}; better-auth.session_data=${FORGED_JWS[4]}`,
      `better-auth.session_data=${b64url('{"session":{"session":{},"user":{}},"expiresAt":9999999999999,"signature":"x"}')}`,
      "better-auth.dont_remember=garbage",
      "=; ; ;;=;",
      "\u00ff\u00fe=\u00fd",
      "a=" + "b".repeat(10_000),
    ];
    const cases: [string, string, Req, Kind][] = [];
    for (const cookie of cookies) {
      cases.push([`get-session cookie ${JSON.stringify(cookie.slice(0, 70))}`, "/api/auth/get-session", { headers: { cookie } }, "any"]);
      cases.push([`POST get-session cookie ${JSON.stringify(cookie.slice(0, 70))}`, "/api/auth/get-session", { method: "POST", headers: { cookie } }, "any"]);
      cases.push([`list-sessions cookie ${JSON.stringify(cookie.slice(0, 70))}`, "/api/auth/list-sessions", { headers: { cookie } }, "any"]);
      cases.push([`/account page cookie ${JSON.stringify(cookie.slice(0, 70))}`, "/account", { headers: { cookie } }, "any"]);
    }
    for (const authorization of ["Bearer", "Bearer  x", "Bearer %zz", ...FORGED_JWS.map((t) => `Bearer ${t}`), `Bearer ${accessToken}`, "Bearer " + "x".repeat(10_000), "Basic x"]) {
      cases.push([`get-session authorization ${JSON.stringify(authorization.slice(0, 50))}`, "/api/auth/get-session", { headers: { authorization } }, "any"]);
      cases.push([`POST get-session authorization ${JSON.stringify(authorization.slice(0, 50))}`, "/api/auth/get-session", { method: "POST", headers: { ...JSON_TYPE, authorization }, body: "{}" }, "any"]);
    }
    cases.push(["get-session odd query", "/api/auth/get-session?disableCookieCache=%zz&disableRefresh[]=1", { headers: { cookie: person.cookie } }, "any"]);
    cases.push(["POST get-session odd query", "/api/auth/get-session?disableCookieCache=%zz&disableRefresh[]=1", { method: "POST", headers: { cookie: person.cookie } }, "any"]);
    for (const body of ["{", "[]", "null", '{"session":{"userId":"x"}}', "x".repeat(70_000)]) {
      cases.push([`POST get-session body ${body.slice(0, 40)}`, "/api/auth/get-session", { headers: { ...JSON_TYPE, cookie: person.cookie }, body }, "any"]);
    }
    await sweep(cases);
  });

  it("sign-in, sign-up and sigma with wrong types", async () => {
    const cases: [string, string, Req, Kind][] = [];
    for (const route of ["/api/auth/sign-in/email", "/api/auth/sign-up/email", "/api/auth/sign-in/sigma", "/api/auth/sign-up/sigma", "/api/auth/sign-in/social", "/api/auth/request-password-reset", "/api/auth/reset-password", "/api/auth/update-user", "/api/auth/change-password"]) {
      for (const body of ["{", "[]", "null", "1", JSON.stringify({ email: 1, password: [], name: {}, provider: 5, callbackURL: [], token: {}, newPassword: 1, currentPassword: null }), JSON.stringify({ email: "\u0000@\ud800", password: "x", name: "x".repeat(70_000) })]) {
        cases.push([`${route} ${body.slice(0, 60)}`, route, { headers: { ...JSON_TYPE, cookie: person.cookie }, body }, "any"]);
      }
    }
    cases.push(["sign-in/sigma garbage x-auth-token", "/api/auth/sign-in/sigma", { headers: { ...JSON_TYPE, "x-auth-token": "a|b|c|d|e" }, body: "{}" }, "any"]);
    cases.push(["sign-in/sigma JWS-shaped x-auth-token", "/api/auth/sign-in/sigma", { headers: { ...JSON_TYPE, "x-auth-token": FORGED_JWS[4]! }, body: "{}" }, "any"]);
    await sweep(cases);
  });
});

describe("better-auth's surface with wrong types", () => {
  it("every account, organization, two-factor, passkey and client-management route", async () => {
    // Someone of their own: a few of these routes end sessions.
    const other = await signUp(server);
    const wrong = JSON.stringify({
      email: [1],
      password: {},
      name: 5,
      newEmail: [],
      newPassword: 1,
      currentPassword: null,
      token: {},
      code: [],
      backupCode: 5,
      provider: [],
      providerId: 1,
      accountId: {},
      userId: [],
      organizationId: 5,
      invitationId: {},
      memberIdOrEmail: [],
      role: {},
      slug: 3,
      id: [],
      client_id: {},
      callbackURL: ["x"],
      redirectTo: 5,
      trustDevice: "yes",
      response: "x",
      options: [],
      limit: "x",
      oauth_query: ["x"],
    });
    const bodies = ["{", "[]", "null", '"x"', wrong, JSON.stringify({ oauth_query: ["x"] }), JSON.stringify({ oauth_query: [["sig", "x"]] }), JSON.stringify({ callbackURL: "//evil.example.com", email: "\u0000@\ud800.x", oauth_query: {} })];
    const posts = [
      "sign-in/email",
      "sign-up/email",
      "sign-in/social",
      "sign-in/sigma",
      "link-social",
      "unlink-account",
      "get-access-token",
      "refresh-token",
      "change-email",
      "change-password",
      "update-user",
      "update-session",
      "verify-password",
      "send-verification-email",
      "request-password-reset",
      "reset-password",
      "revoke-session",
      "organization/create",
      "organization/update",
      "organization/delete",
      "organization/invite-member",
      "organization/accept-invitation",
      "organization/reject-invitation",
      "organization/cancel-invitation",
      "organization/remove-member",
      "organization/update-member-role",
      "organization/leave",
      "organization/set-active",
      "organization/check-slug",
      "organization/has-permission",
      "two-factor/enable",
      "two-factor/disable",
      "two-factor/verify-totp",
      "two-factor/verify-otp",
      "two-factor/verify-backup-code",
      "two-factor/generate-backup-codes",
      "two-factor/get-totp-uri",
      "two-factor/send-otp",
      "passkey/verify-registration",
      "passkey/verify-authentication",
      "passkey/delete-passkey",
      "passkey/update-passkey",
      "admin/ban-user",
      "admin/set-role",
      "admin/create-user",
      "admin/has-permission",
      "oauth2/create-client",
      "oauth2/update-client",
      "oauth2/delete-client",
      "oauth2/client/rotate-secret",
      "oauth2/update-consent",
      "oauth2/delete-consent",
      "oauth2/public-client-prelogin",
    ];
    const cases: [string, string, Req, Kind][] = [];
    for (const route of posts) {
      for (const body of bodies) {
        cases.push([`POST /api/auth/${route} ${body.slice(0, 60)}`, `/api/auth/${route}`, { headers: { ...JSON_TYPE, cookie: other.cookie }, body }, "any"]);
      }
      cases.push([`POST /api/auth/${route} anonymous`, `/api/auth/${route}`, { headers: JSON_TYPE, body: wrong }, "any"]);
      cases.push([`POST /api/auth/${route} form`, `/api/auth/${route}`, { headers: { ...FORM, cookie: other.cookie }, body: "email[]=x&password=%zz&oauth_query[]=x" }, "any"]);
    }
    const gets = [
      "verify-email?token=" + FORGED_JWS[4],
      "verify-email?token=a.b.c",
      "verify-email?token=%zz&callbackURL=//evil.example.com",
      "reset-password/%zz?callbackURL=%00",
      "reset-password/" + "x".repeat(3000),
      "delete-user/callback?token=" + FORGED_JWS[4],
      "change-email/confirm?token=%zz&callbackURL=//evil.example.com",
      "change-email/confirm?token[]=x",
      "change-email/undo?token=" + "x".repeat(3000),
      "change-email/undo",
      "callback/google?code=x&state=%zz",
      "callback/nope?code=x&state=" + FORGED_JWS[4],
      "callback/%zz",
      "error?error=%zz",
      "account-info?accountId=%zz",
      "account-info?accountId[]=x",
      "list-accounts?x=%zz",
      "organization/get-full-organization?organizationId=%zz",
      "organization/get-full-organization?organizationId=a&organizationId=b",
      "organization/get-invitation?id=" + "x".repeat(5000),
      "organization/list-members?limit=abc&offset=-1&sortBy[]=x",
      "organization/list-invitations?organizationId=%00",
      "organization/get-active-member",
      "passkey/generate-register-options?authenticatorAttachment=%zz&name[]=x",
      "passkey/generate-authenticate-options?x=%zz",
      "passkey/list-user-passkeys",
      "admin/list-users?limit=abc&offset=-5&searchValue=%zz&filterField[]=x",
      "admin/get-user?id=%zz",
      "oauth2/get-client?client_id=%zz",
      "oauth2/get-client?client_id[]=x",
      "oauth2/get-clients?x=%zz",
      "oauth2/public-client?client_id=%zz",
      "oauth2/public-client?client_id=" + "x".repeat(5000),
      "oauth2/get-consent?id=%zz",
      "oauth2/get-consents?x=[]",
      "jwks?x=%zz",
      "ok?x=%zz",
    ];
    for (const route of gets) {
      cases.push([`GET /api/auth/${route.slice(0, 70)}`, `/api/auth/${route}`, { headers: { cookie: other.cookie } }, "any"]);
      cases.push([`GET /api/auth/${route.slice(0, 70)} anonymous`, `/api/auth/${route}`, {}, "any"]);
    }
    // Redirect targets that cannot be parsed or composed, on every route that redirects to one.
    for (const target of ["//evil.example.com", "/\\evil.example.com", "http://[::1", "https://", "javascript:alert(1)", "%zz", "/\u0000", " "]) {
      const t = encodeURIComponent(target);
      for (const route of [`verify-email?token=x&callbackURL=${t}`, `change-email/confirm?token=x&callbackURL=${t}`, `verify-email?token=${FORGED_JWS[4]}&callbackURL=${t}`, `reset-password/nope?callbackURL=${t}`, `delete-user/callback?token=nope&callbackURL=${t}`, `error?error=x&callbackURL=${t}`]) {
        cases.push([`GET /api/auth/${route}`, `/api/auth/${route}`, {}, "any"]);
      }
      for (const [route, body] of [
        ["request-password-reset", { email: other.email, redirectTo: target }],
        ["send-verification-email", { email: other.email, callbackURL: target }],
        ["sign-in/social", { provider: "google", callbackURL: target, errorCallbackURL: target, newUserCallbackURL: target }],
        ["link-social", { provider: "google", callbackURL: target }],
        ["change-email", { newEmail: "new-" + other.email, callbackURL: target }],
        ["delete-user", { callbackURL: target, password: "wrong" }],
      ] as const) {
        cases.push([`POST /api/auth/${route} ${JSON.stringify(body).slice(0, 80)}`, `/api/auth/${route}`, { headers: { ...JSON_TYPE, cookie: other.cookie }, body: JSON.stringify(body) }, "any"]);
      }
    }
    await sweep(cases);
    // Last: the routes that end every session of `other`.
    await sweep(
      ["sign-out", "revoke-other-sessions", "revoke-sessions", "delete-user"].flatMap((route): [string, string, Req, Kind][] => [
        [`POST /api/auth/${route} wrong types`, `/api/auth/${route}`, { headers: { ...JSON_TYPE, cookie: other.cookie }, body: wrong }, "any"],
        [`POST /api/auth/${route} array`, `/api/auth/${route}`, { headers: { ...JSON_TYPE, cookie: other.cookie }, body: "[]" }, "any"],
      ]),
    );
  }, 30_000);
});

describe("deep JSON and wrong user-field types", () => {
  /** `{"a":{"a":...}}` nested `depth` levels, with `leaf` at the bottom. */
  const nested = (depth: number, leaf = "1") => '{"a":'.repeat(depth) + leaf + "}".repeat(depth);

  it("update-user refuses object and array name and image with better-auth's 400", async () => {
    for (const field of ["name", "image"]) {
      for (const value of [{}, { a: 1 }, [], ["x"], [1, 2]]) {
        const res = await send("/api/auth/update-user", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify({ [field]: value }) });
        expectClean(`update-user ${field}=${JSON.stringify(value)}`, res, "any");
        expect(res.status, res.text).toBe(400);
        expect(res.json?.code).toBe("VALIDATION_ERROR");
      }
    }
    const ok = await send("/api/auth/update-user", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify({ name: "Still Fine", image: null }) });
    expect(ok.status, ok.text).toBe(200);
  });

  it("a registration body nested 10,000 deep is an RFC 6749 400", async () => {
    const body = `{"client_name":"Deep","redirect_uris":[${JSON.stringify(REDIRECT)}],"token_endpoint_auth_method":"none","a":${nested(10_000)}}`;
    const res = await send("/api/auth/oauth2/register", { headers: JSON_TYPE, body });
    expectClean("register 10,000 deep", res, "oauth");
    expect(res.status, res.text).toBe(400);
    expect(res.json?.error).toBe("invalid_request");
  });

  it("any better-auth body past 32 levels is refused, 32 levels still pass the guard", async () => {
    const deep = await send("/api/auth/update-user", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: `{"x":${nested(32)}}` });
    expectClean("update-user 33 deep", deep, "problem");
    expect(deep.status).toBe(400);
    const chunked = await send("/api/auth/sign-in/email", { headers: JSON_TYPE, body: nested(5_000), chunked: true });
    expectClean("sign-in chunked 5,000 deep", chunked, "problem");
    expect(chunked.status).toBe(400);
    // Brackets inside strings are text, not nesting.
    const text = await send("/api/auth/update-user", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify({ name: "[{".repeat(60) + '\\"' }) });
    expect(text.status, text.text).toBe(200);
  });

  it("profile documents nested 5,000 deep on /api/bap/profile and /api/user/bap-ids are a 400 problem", async () => {
    const id = newIdentity();
    const registerBody = JSON.stringify({ bapId: id.bapId });
    const registered = await send("/api/user/bap-ids", { headers: { ...JSON_TYPE, cookie: person.cookie, "x-auth-token": signRequest(id.key, "/api/user/bap-ids", registerBody) }, body: registerBody });
    expect(registered.status, registered.text).toBe(201);

    const deepIdentity = `{"bapId":${JSON.stringify(id.bapId)},"profile":{"identity":${nested(5_000)}}}`;
    const register = await send("/api/user/bap-ids", { headers: { ...JSON_TYPE, cookie: person.cookie, "x-auth-token": signRequest(id.key, "/api/user/bap-ids", deepIdentity) }, body: deepIdentity });
    expectClean("bap-ids 5,000 deep", register, "problem");
    expect(register.status).toBe(400);

    const draft = await send("/api/bap/profile", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: deepIdentity });
    expectClean("bap profile 5,000 deep", draft, "problem");
    expect(draft.status).toBe(400);

    const published = `{"bapId":${JSON.stringify(id.bapId)},"txid":"${"b".repeat(64)}","profile":{"identity":${nested(5_000)}}}`;
    const publish = await send("/api/bap/profile/published", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: published });
    expectClean("bap publication 5,000 deep", publish, "problem");
    expect(publish.status).toBe(400);
  });
});

describe("the OpenAPI document", () => {
  it("describes every answer of this sweep: route, status, content type and body", expectAnswersAsDocumented, 60_000);
});

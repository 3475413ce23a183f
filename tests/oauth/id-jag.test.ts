import { randomUUID } from "node:crypto";
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { confidentialClient, ID_JAG, ID_TOKEN, JWT_BEARER, redeem, requestAssertion, samePersonAt, signIn, startAssertionIssuer, TOKEN_EXCHANGE, type Client } from "../helpers/id-jag.js";
import { registerClient } from "../helpers/oauth.js";
import { loadEnv } from "../../lib/env.js";
import { freePort, postForm } from "../helpers/server.js";
import { basic, callMcp } from "../helpers/token-exchange.js";

/**
 * Identity Assertion JWT Authorization Grants (draft-ietf-oauth-identity-assertion-authz-grant),
 * both sides on two real instances: `idp` issues ID-JAGs for `as` (ID_JAG_AUDIENCES) by token
 * exchange, and `as` redeems them by the JWT bearer grant (ID_JAG_TRUSTED_ISSUERS names `idp`),
 * finding `idp`'s keys through its discovery document. openid-client's generic grant request
 * makes both calls. A hand-made identity provider (also trusted) signs the assertions no real
 * one issues; another, not trusted, is refused.
 */
let asPort = 0;
let trusted: Awaited<ReturnType<typeof startAssertionIssuer>>;
let untrusted: Awaited<ReturnType<typeof startAssertionIssuer>>;
beforeAll(async () => {
  asPort = await freePort();
  trusted = await startAssertionIssuer();
  untrusted = await startAssertionIssuer();
});
afterAll(async () => {
  await trusted?.close();
  await untrusted?.close();
});
const asUrl = () => `http://127.0.0.1:${asPort}`;
const idp = useTestServer(() => ({ ID_JAG_AUDIENCES: asUrl() }));
const as = useTestServer(() => ({ PORT: String(asPort), AUTH_URL: asUrl(), ID_JAG_TRUSTED_ISSUERS: `${idp.url},${trusted.issuer}`, OUTBOUND_ALLOW_PRIVATE: "true" }));
/** The same trust without OUTBOUND_ALLOW_PRIVATE: the guarded fetcher keeps it from the loopback issuer. */
const guarded = useTestServer(() => ({ ID_JAG_TRUSTED_ISSUERS: trusted.issuer }));

/** An app signed in with `idp` that is also a client of `as` (its client_id there in id_jag_clients). */
async function enterpriseApp() {
  const there = await confidentialClient(as, [JWT_BEARER]);
  const here = await confidentialClient(idp, [TOKEN_EXCHANGE], { id_jag_clients: { [as.url]: there.id } });
  return { here, there };
}

/** A refused form post to a token endpoint: the RFC 6749 §5.2 error. */
async function refusal(target: { url: string }, client: Pick<Client, "id" | "secret">, form: Record<string, string>) {
  const res = await postForm(target, "/api/auth/oauth2/token", form, basic(client.id, client.secret));
  expect(res.status, res.text).toBe(400);
  expect(res.headers.get("content-type")).toMatch(/application\/json/);
  return res.json as { error: string; error_description: string };
}

describe("ID-JAG: enterprise-managed authorization", () => {
  it("discovery advertises each side only where it is configured", async () => {
    const idpMeta = (await idp.api("/.well-known/oauth-authorization-server")).json;
    expect(idpMeta.identity_chaining_requested_token_types_supported).toEqual([ID_JAG]);
    expect(idpMeta.grant_types_supported).not.toContain(JWT_BEARER);
    const asMeta = (await as.api("/.well-known/oauth-authorization-server")).json;
    expect(asMeta.grant_types_supported).toContain(JWT_BEARER);
    expect(asMeta.identity_chaining_requested_token_types_supported).toBeUndefined();
    expect((await as.api("/.well-known/openid-configuration")).json.grant_types_supported).toContain(JWT_BEARER);
    const idpLlms = (await idp.api("/llms.txt")).text;
    expect(idpLlms).toContain(`requested_token_type=${ID_JAG}`);
    expect(idpLlms).not.toContain(`grant_type=${JWT_BEARER}`);
    const asLlms = (await as.api("/llms.txt")).text;
    expect(asLlms).toContain(`grant_type=${JWT_BEARER}`);
    expect(asLlms).not.toContain(`requested_token_type=${ID_JAG}`);
  });

  it("an ID-JAG issued by one instance is redeemed by a second that trusts it, for the person with that verified e-mail", async () => {
    const app = await enterpriseApp();
    const { person, idToken } = await signIn(idp, app.here);
    const userThere = await samePersonAt(as, person.email);
    const issued = await requestAssertion(app.here, idToken, { audience: as.url, scope: "openid profile", resource: `${as.url}/mcp` });
    expect(issued).toMatchObject({ issued_token_type: ID_JAG, token_type: "n_a" });
    expect(issued.refresh_token).toBeUndefined();
    const assertion = issued.access_token;
    expect(decodeProtectedHeader(assertion).typ).toBe("oauth-id-jag+jwt");
    // Signed with the identity provider's published keys.
    const { payload } = await jwtVerify(assertion, createLocalJWKSet((await idp.api("/api/auth/jwks")).json), { issuer: idp.url, audience: as.url, typ: "oauth-id-jag+jwt" });
    expect(payload).toMatchObject({ sub: person.user.id, client_id: app.there.id, scope: "openid profile", resource: `${as.url}/mcp`, email: person.email });
    expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(300);
    expect(typeof payload.jti).toBe("string");

    const tokens = await redeem(app.there, assertion);
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.token_type).toBe("bearer");
    const claims = decodeJwt(tokens.access_token);
    expect(claims).toMatchObject({ iss: as.url, sub: userThere, aud: `${as.url}/mcp`, client_id: app.there.id });
    expect(String(claims.scope).split(" ").sort()).toEqual(["openid", "profile"]);
    expect((await callMcp(as, tokens.access_token)).status).toBe(200);

    // Single use: the same assertion again is refused.
    const again = await refusal(as, app.there, { grant_type: JWT_BEARER, assertion });
    expect(again.error).toBe("invalid_grant");
    expect(again.error_description).toMatch(/already used/);
  });

  it("an access token of ours issued to the app is a subject token too; one of another app is not", async () => {
    const app = await enterpriseApp();
    const { person, accessToken, idToken } = await signIn(idp, app.here);
    await samePersonAt(as, person.email);
    const issued = await requestAssertion(app.here, accessToken, { audience: as.url, subject_token_type: "urn:ietf:params:oauth:token-type:access_token", scope: "profile" });
    const tokens = await redeem(app.there, issued.access_token);
    expect(tokens.scope).toBe("profile");
    const other = await enterpriseApp();
    const refused = await refusal(idp, other.here, { grant_type: TOKEN_EXCHANGE, requested_token_type: ID_JAG, subject_token: idToken, subject_token_type: ID_TOKEN, audience: as.url });
    expect(refused.error).toBe("invalid_request");
  });

  it("the admin policy decides at the identity provider: an audience not configured, an app without a client_id there", async () => {
    const app = await confidentialClient(idp, [TOKEN_EXCHANGE], { id_jag_clients: { [as.url]: "x", "https://other-as.example": "y" } });
    const { idToken } = await signIn(idp, app);
    const form = { grant_type: TOKEN_EXCHANGE, requested_token_type: ID_JAG, subject_token: idToken, subject_token_type: ID_TOKEN };
    expect((await refusal(idp, app, { ...form, audience: "https://other-as.example" })).error).toBe("invalid_target");
    expect((await refusal(idp, app, { ...form })).error).toBe("invalid_request");
    const unmapped = await confidentialClient(idp, [TOKEN_EXCHANGE]);
    const signedIn = await signIn(idp, unmapped);
    expect((await refusal(idp, unmapped, { ...form, subject_token: signedIn.idToken, audience: as.url })).error).toBe("unauthorized_client");
    // The resource AS issues none: it has no audiences configured.
    const there = await confidentialClient(as, [TOKEN_EXCHANGE], { id_jag_clients: { [idp.url]: "z" } });
    const atAs = await signIn(as, there);
    const none = await refusal(as, there, { ...form, subject_token: atAs.idToken, audience: idp.url });
    expect(none.error).toBe("invalid_request");
  });

  it("id_jag_clients is checked at registration", async () => {
    for (const id_jag_clients of [["x"], { "not a url": "x" }, { [as.url]: 5 }, { [as.url]: "" }]) {
      const res = await idp.api("/api/auth/oauth2/register", { body: { client_name: "Bad", redirect_uris: ["http://127.0.0.1:9999/callback"], token_endpoint_auth_method: "client_secret_basic", grant_types: ["authorization_code"], id_jag_clients } });
      expect(res.status, JSON.stringify(id_jag_clients)).toBe(400);
      expect(res.json.error).toBe("invalid_client_metadata");
    }
    const ok = await registerClient(idp, { id_jag_clients: { [as.url]: "abc" } });
    expect(ok.id_jag_clients).toEqual({ [as.url]: "abc" });
    // Beside other registration metadata kept by our hooks (CIBA's delivery mode).
    const both = await registerClient(idp, { application_type: "web", token_endpoint_auth_method: "client_secret_basic", grant_types: ["authorization_code", "urn:openid:params:grant-type:ciba", TOKEN_EXCHANGE], backchannel_token_delivery_mode: "poll", id_jag_clients: { [as.url]: "abc" } });
    expect(both).toMatchObject({ backchannel_token_delivery_mode: "poll", id_jag_clients: { [as.url]: "abc" } });
    const row = await idp.db.selectFrom("oauthClient").select(["metadata", "backchannelTokenDeliveryMode"]).where("clientId", "=", both.client_id).executeTakeFirstOrThrow();
    expect(row.backchannelTokenDeliveryMode).toBe("poll");
    // JSON text on SQLite, jsonb on PostgreSQL.
    expect(typeof row.metadata === "string" ? JSON.parse(row.metadata) : row.metadata).toMatchObject({ id_jag_clients: { [as.url]: "abc" } });
  });

  it("the resource AS refuses another client's assertion (client_id mismatch)", async () => {
    const app = await enterpriseApp();
    const { person, idToken } = await signIn(idp, app.here);
    await samePersonAt(as, person.email);
    const { access_token: assertion } = await requestAssertion(app.here, idToken, { audience: as.url, scope: "profile" });
    const thief = await confidentialClient(as, [JWT_BEARER]);
    const refused = await refusal(as, thief, { grant_type: JWT_BEARER, assertion });
    expect(refused.error).toBe("invalid_grant");
    expect(refused.error_description).toMatch(/another client/);
    // The rightful client still can: a refusal does not spend the jti.
    expect((await redeem(app.there, assertion)).access_token).toBeTruthy();
  });

  it("refuses a wrong aud, an expired or long-lived assertion, the wrong typ, an untrusted or forged issuer, an unknown person", async () => {
    const client = await confidentialClient(as, [JWT_BEARER]);
    const { person } = await signIn(idp, (await enterpriseApp()).here);
    await samePersonAt(as, person.email);
    const now = Math.floor(Date.now() / 1000);
    const good = { sub: "p1", aud: as.url, client_id: client.id, email: person.email, scope: "profile" };
    // The hand-made issuer's well-formed assertion is accepted: each refusal below changes one thing.
    expect((await redeem(client, await trusted.sign(good))).access_token).toBeTruthy();
    const cases: Array<[string, Promise<string>, RegExp]> = [
      ["wrong aud", trusted.sign({ ...good, aud: "https://other-as.example" }), /aud/],
      ["expired", trusted.sign({ ...good, iat: now - 600, exp: now - 300 }), /expired/],
      ["long-lived", trusted.sign({ ...good, exp: now + 3600 }), /longer than/],
      ["wrong typ", trusted.sign(good, { typ: "JWT" }), /typ/],
      ["untrusted issuer", untrusted.sign(good), /not trusted/],
      ["forged issuer", untrusted.sign({ ...good, iss: trusted.issuer }), /signature/],
      ["forged idp", untrusted.sign({ ...good, iss: idp.url }), /signature/],
      ["unknown person", trusted.sign({ ...good, email: "nobody@example.com" }), /verified e-mail/],
      ["no e-mail", trusted.sign({ ...good, email: undefined }), /verified e-mail/],
    ];
    for (const [name, signed, description] of cases) {
      const refused = await refusal(as, client, { grant_type: JWT_BEARER, assertion: await signed });
      expect(refused.error, name).toBe("invalid_grant");
      expect(refused.error_description, name).toMatch(description);
    }
    await samePersonAt(as, person.email, false);
    const unverified = await refusal(as, client, { grant_type: JWT_BEARER, assertion: await trusted.sign(good) });
    expect(unverified.error).toBe("invalid_grant");
    await samePersonAt(as, person.email, true);
    for (const assertion of ["not-a-jwt", "a.b.c"]) expect((await refusal(as, client, { grant_type: JWT_BEARER, assertion })).error).toBe("invalid_grant");
    expect((await refusal(as, client, { grant_type: JWT_BEARER })).error).toBe("invalid_request");
    // A resource the policy does not give, or a scope the assertion does not carry.
    expect((await refusal(as, client, { grant_type: JWT_BEARER, assertion: await trusted.sign({ ...good, resource: "https://api.elsewhere.example/" }), resource: "https://other.example/" })).error).toBe("invalid_target");
    expect((await refusal(as, client, { grant_type: JWT_BEARER, assertion: await trusted.sign(good), scope: "profile email" })).error).toBe("invalid_scope");
  });

  it("a client not registered for the grant is unauthorized_client; a wrong secret invalid_client", async () => {
    const client = await confidentialClient(as, []);
    const assertion = await trusted.sign({ sub: "p", aud: as.url, client_id: client.id, scope: "profile" });
    expect((await refusal(as, client, { grant_type: JWT_BEARER, assertion })).error).toBe("unauthorized_client");
    const res = await postForm(as, "/api/auth/oauth2/token", { grant_type: JWT_BEARER, assertion }, basic(client.id, "wrong"));
    expect(res.json.error).toBe("invalid_client");
  });

  it("a jti redeemed twice at once is redeemed once", async () => {
    const client = await confidentialClient(as, [JWT_BEARER]);
    const { person } = await signIn(idp, (await enterpriseApp()).here);
    await samePersonAt(as, person.email);
    const assertion = await trusted.sign({ sub: "p2", aud: as.url, client_id: client.id, email: person.email, scope: "profile" });
    const answers = await Promise.all([0, 1, 2].map(() => postForm(as, "/api/auth/oauth2/token", { grant_type: JWT_BEARER, assertion }, basic(client.id, client.secret))));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400]);
    for (const refused of answers.filter((a) => a.status === 400)) expect(refused.json.error).toBe("invalid_grant");
  });

  it("the trusted issuer's keys are fetched through the guarded fetcher: a loopback issuer is refused without OUTBOUND_ALLOW_PRIVATE", async () => {
    const client = await confidentialClient(guarded, [JWT_BEARER]);
    const assertion = await trusted.sign({ sub: "p3", aud: guarded.url, client_id: client.id, email: "someone@example.com", scope: "profile" });
    const refused = await refusal(guarded, client, { grant_type: JWT_BEARER, assertion });
    expect(refused.error).toBe("invalid_grant");
    expect(refused.error_description).toMatch(/keys are not available: .*resolves to 127\.0\.0\.1/);
  });

  it("the settings take issuer URLs only", () => {
    for (const bad of ["not a url", "ftp://idp.example", "https://idp.example/?tenant=1", "https://idp.example/#x"]) {
      expect(() => loadEnv({ ID_JAG_TRUSTED_ISSUERS: bad }), bad).toThrow(/ID_JAG_TRUSTED_ISSUERS/);
      expect(() => loadEnv({ ID_JAG_AUDIENCES: `https://ok.example,${bad}` }), bad).toThrow(/ID_JAG_AUDIENCES/);
    }
    expect(loadEnv({ ID_JAG_AUDIENCES: " https://a.example , https://b.example/tenant " }).idJag.audiences).toEqual(["https://a.example", "https://b.example/tenant"]);
  });

  it("a configured resource's allowed scopes bound what its token carries", async () => {
    const client = await confidentialClient(as, [JWT_BEARER]);
    const { person } = await signIn(idp, (await enterpriseApp()).here);
    await samePersonAt(as, person.email);
    const now = new Date();
    const api = `https://api-${randomUUID().slice(0, 8)}.example/v1`;
    await as.db.insertInto("oauthResource").values({ id: randomUUID(), identifier: api, name: "API", disabled: false, policyVersion: 1, allowedScopes: JSON.stringify(["profile"]), createdAt: now, updatedAt: now }).execute();
    const claims = { sub: "p4", aud: as.url, client_id: client.id, email: person.email, resource: api };
    const tokens = await redeem(client, await trusted.sign({ ...claims, scope: "profile email" }));
    expect(decodeJwt(tokens.access_token)).toMatchObject({ aud: api, scope: "profile" });
    expect((await refusal(as, client, { grant_type: JWT_BEARER, assertion: await trusted.sign({ ...claims, scope: "email" }) })).error).toBe("invalid_scope");
  });
});

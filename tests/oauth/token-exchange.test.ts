import { randomUUID } from "node:crypto";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { registerClient, token } from "../helpers/oauth.js";
import { postForm } from "../helpers/server.js";
import { ACCESS_TOKEN, basic, callMcp, exchange, exchangeForm, GRANT, introspect, mcp, personsGrant, registerAgent, verified } from "../helpers/token-exchange.js";

/**
 * RFC 8693 token exchange for delegation: an agent (a confidential client registered for the
 * grant) trades a person's access token for an RFC 9068 JWT that names it in `act`. The agent
 * is openid-client (its generic grant request); refusals are plain form posts.
 */
const server = useTestServer();

describe("token exchange (RFC 8693)", () => {
  it("discovery lists the grant type, and /llms.txt tells an agent how to use it", async () => {
    const res = await server.api("/.well-known/oauth-authorization-server");
    expect(res.json.grant_types_supported).toContain(GRANT);
    expect((await server.api("/.well-known/openid-configuration")).json.grant_types_supported).toContain(GRANT);
    const llms = await server.api("/llms.txt");
    expect(llms.text).toContain(`grant_type=${GRANT}`);
  });

  it("an opaque token of the person becomes a JWT for /mcp naming the agent in act, no longer-lived than the subject token", async () => {
    const grant = await personsGrant(server);
    const agent = await registerAgent(server);
    const subjectExp = Math.floor(Date.now() / 1000) + grant.expiresIn;
    const res = await exchange(agent, grant.accessToken, { resource: mcp(server) });
    expect(res).toMatchObject({ issued_token_type: ACCESS_TOKEN, token_type: "bearer" });
    expect(res.refresh_token).toBeUndefined();
    const claims = await verified(server, res.access_token, mcp(server));
    expect(claims).toMatchObject({ sub: grant.person.user.id, act: { sub: agent.id }, client_id: agent.id, aud: mcp(server) });
    expect(claims.scope).toBe("openid profile");
    expect(claims.exp).toBeLessThanOrEqual(subjectExp + 1);
    expect(res.expires_in).toBe(claims.exp! - claims.iat!);
    // It works where it is for.
    expect((await callMcp(server, res.access_token)).status).toBe(200);
  });

  it("a JWT for /mcp is narrowed to fewer scopes; a scope the subject token lacks is invalid_scope", async () => {
    const grant = await personsGrant(server, { resource: mcp(server) });
    const agent = await registerAgent(server);
    // A second later a full lifetime would outlast the subject token: the exchange keeps its exp.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const res = await exchange(agent, grant.accessToken, { scope: "profile" });
    const claims = await verified(server, res.access_token, mcp(server));
    expect(claims.exp).toBe(decodeJwt(grant.accessToken).exp);
    expect(claims.scope).toBe("profile");
    expect(claims.act).toEqual({ sub: agent.id });
    const wider = await exchangeForm(server, agent, grant.accessToken, { scope: "profile email" });
    expect(wider.status).toBe(400);
    expect(wider.json.error).toBe("invalid_scope");
  });

  it("never an audience the subject token or the policy does not give: invalid_target", async () => {
    const grant = await personsGrant(server);
    const agent = await registerAgent(server);
    const elsewhere = await exchangeForm(server, agent, grant.accessToken, { resource: "https://api.example/" });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.json.error).toBe("invalid_target");
    const none = await exchangeForm(server, agent, grant.accessToken);
    expect(none.json.error).toBe("invalid_target");
    const jwtGrant = await personsGrant(server, { resource: mcp(server) });
    const other = await exchangeForm(server, agent, jwtGrant.accessToken, { resource: "https://api.example/" });
    expect(other.json.error).toBe("invalid_target");
  });

  it("the resource policy still decides for the agent: an allow-list keeps it from the subject token's resource", async () => {
    const api = "https://api.example/";
    const grant = await personsGrant(server, { resource: api });
    const open = await registerAgent(server, "Open agent");
    expect(decodeJwt((await exchange(open, grant.accessToken)).access_token).aud).toBe(api);
    const listed = await registerAgent(server, "Listed agent");
    const now = new Date();
    // Its own resource: on PostgreSQL the database outlives this file.
    const own = `https://api-${randomUUID().slice(0, 8)}.example/v1`;
    await server.db.insertInto("oauthResource").values({ id: randomUUID(), identifier: own, name: "API", disabled: false, policyVersion: 1, createdAt: now, updatedAt: now }).execute();
    await server.db.insertInto("oauthClientResource").values({ id: randomUUID(), clientId: listed.id, resourceId: own, createdAt: now }).execute();
    const refused = await exchangeForm(server, listed, grant.accessToken);
    expect(refused.status).toBe(400);
    expect(refused.json.error).toBe("invalid_target");
  });

  it("a configured resource's claims apply to the delegated token, within its lifetime", async () => {
    const now = new Date();
    const api = `https://api-${randomUUID().slice(0, 8)}.example/v1`;
    const customClaims = JSON.stringify({ tenant: "acme" });
    await server.db.insertInto("oauthResource").values({ id: randomUUID(), identifier: api, name: "API", disabled: false, policyVersion: 1, accessTokenTtl: 60, customClaims, createdAt: now, updatedAt: now }).execute();
    const grant = await personsGrant(server, { resource: api });
    const agent = await registerAgent(server);
    const res = await exchangeForm(server, agent, grant.accessToken);
    expect(res.status, res.text).toBe(200);
    const claims = decodeJwt(res.json.access_token);
    expect(claims).toMatchObject({ aud: api, tenant: "acme", sub: grant.person.user.id, act: { sub: agent.id } });
    expect(claims.exp! - claims.iat!).toBeLessThanOrEqual(60);
  });

  it("an unknown, malformed or revoked subject token is invalid_request (RFC 8693 §2.2.2)", async () => {
    const agent = await registerAgent(server);
    for (const subject of ["not-a-token", "eyJhbGciOiJIUzI1NiJ9.e30.c2ln", "a".repeat(40)]) {
      const res = await exchangeForm(server, agent, subject, { resource: mcp(server) });
      expect(res.status, subject).toBe(400);
      expect(res.json.error, subject).toBe("invalid_request");
    }
    const grant = await personsGrant(server);
    const revoked = await postForm(server, "/api/auth/oauth2/revoke", { token: grant.refreshToken, token_type_hint: "refresh_token", client_id: grant.app.client_id });
    expect(revoked.status).toBe(200);
    const res = await exchangeForm(server, agent, grant.accessToken, { resource: mcp(server) });
    expect(res.json.error).toBe("invalid_request");
    const type = await exchangeForm(server, agent, "x", { subject_token_type: "urn:ietf:params:oauth:token-type:id_token" });
    expect(type.json.error).toBe("invalid_request");
  });

  it("only a confidential client registered for the grant: unauthorized_client, invalid_client", async () => {
    const grant = await personsGrant(server);
    const other = await registerClient(server, { application_type: "web", token_endpoint_auth_method: "client_secret_basic", grant_types: ["authorization_code"] });
    const res = await exchangeForm(server, { id: other.client_id, secret: other.client_secret! }, grant.accessToken, { resource: mcp(server) });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe("unauthorized_client");
    const wrongSecret = await exchangeForm(server, { id: other.client_id, secret: "wrong" }, grant.accessToken, { resource: mcp(server) });
    expect(wrongSecret.json.error).toBe("invalid_client");
    const publicClient = await postForm(server, "/api/auth/oauth2/token", { grant_type: GRANT, client_id: grant.app.client_id, subject_token: grant.accessToken, subject_token_type: ACCESS_TOKEN, resource: mcp(server) });
    expect(publicClient.json.error).toMatch(/invalid_client|unauthorized_client/);
  });

  it("an actor token must be the agent's own", async () => {
    const grant = await personsGrant(server, { resource: mcp(server) });
    const agent = await registerAgent(server);
    const other = await personsGrant(server);
    const res = await exchangeForm(server, agent, grant.accessToken, { actor_token: other.accessToken, actor_token_type: ACCESS_TOKEN });
    expect(res.json.error).toBe("invalid_request");
  });

  it("exchanging a delegated token nests act up to TOKEN_EXCHANGE_MAX_DEPTH, refused past it", async () => {
    expect(server.config.tokenExchangeMaxDepth).toBe(3);
    const grant = await personsGrant(server, { resource: mcp(server) });
    const agents = [await registerAgent(server, "A"), await registerAgent(server, "B"), await registerAgent(server, "C"), await registerAgent(server, "D")];
    let current = grant.accessToken;
    for (const agent of agents.slice(0, 3)) current = (await exchange(agent, current)).access_token;
    const claims = await verified(server, current, mcp(server));
    expect(claims.act).toEqual({ sub: agents[2]!.id, act: { sub: agents[1]!.id, act: { sub: agents[0]!.id } } });
    expect(claims.sub).toBe(grant.person.user.id);
    const past = await exchangeForm(server, agents[3]!, current);
    expect(past.status).toBe(400);
    expect(past.json.error).toBe("invalid_request");
    expect(past.json.error_description).toMatch(/at most 3/);
  });

  it("may_act in a subject token must name the actor", async () => {
    const grant = await personsGrant(server, { resource: mcp(server) });
    const [a, b, c] = [await registerAgent(server, "A"), await registerAgent(server, "B"), await registerAgent(server, "C")];
    const delegated = (await exchange(a, grant.accessToken, { may_act: b.id })).access_token;
    expect(decodeJwt(delegated).may_act).toEqual({ sub: b.id });
    const refused = await exchangeForm(server, c, delegated);
    expect(refused.status).toBe(400);
    expect(refused.json.error).toBe("invalid_request");
    const accepted = await exchange(b, delegated);
    expect(decodeJwt(accepted.access_token).act).toEqual({ sub: b.id, act: { sub: a.id } });
  });

  it("introspection reports act to the agent", async () => {
    const grant = await personsGrant(server, { resource: mcp(server) });
    const agent = await registerAgent(server);
    const delegated = (await exchange(agent, grant.accessToken)).access_token;
    const res = await introspect(server, agent, delegated);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ active: true, sub: grant.person.user.id, client_id: agent.id, act: { sub: agent.id } });
  });

  it("revoking the person's refresh token ends every token exchanged from that grant, at introspection and at /mcp", async () => {
    const grant = await personsGrant(server);
    const [a, b] = [await registerAgent(server, "A"), await registerAgent(server, "B")];
    const delegated = (await exchange(a, grant.accessToken, { resource: mcp(server) })).access_token;
    const nested = (await exchange(b, delegated)).access_token;
    // Another grant of the same person, to another app, is not touched.
    const unrelated = await personsGrant(server);
    const kept = (await exchange(a, unrelated.accessToken, { resource: mcp(server) })).access_token;
    expect((await introspect(server, a, delegated)).json.active).toBe(true);
    expect((await callMcp(server, nested)).status).toBe(200);

    const revoked = await postForm(server, "/api/auth/oauth2/revoke", { token: grant.refreshToken, token_type_hint: "refresh_token", client_id: grant.app.client_id });
    expect(revoked.status).toBe(200);
    expect((await introspect(server, a, delegated)).json).toEqual({ active: false });
    expect((await introspect(server, b, nested)).json).toEqual({ active: false });
    expect((await callMcp(server, delegated)).status).toBe(401);
    expect((await callMcp(server, nested)).status).toBe(401);
    // Nor can a revoked delegated token be exchanged again.
    expect((await exchangeForm(server, b, delegated)).json.error).toBe("invalid_request");
    expect((await introspect(server, a, kept)).json.active).toBe(true);
    expect((await callMcp(server, kept)).status).toBe(200);
  });

  it("a rotated refresh token used again ends the grant (the family), and the tokens exchanged from it", async () => {
    const grant = await personsGrant(server);
    const agent = await registerAgent(server);
    const delegated = (await exchange(agent, grant.accessToken, { resource: mcp(server) })).access_token;
    const refresh = () => token(server, { grant_type: "refresh_token", refresh_token: grant.refreshToken, client_id: grant.app.client_id });
    expect((await refresh()).status).toBe(200);
    // A refresh in turn leaves the grant, and the delegated token, in force.
    expect((await introspect(server, agent, delegated)).json.active).toBe(true);
    const reused = await refresh();
    expect(reused.status).toBe(400);
    expect(reused.json.error).toBe("invalid_grant");
    expect((await introspect(server, agent, delegated)).json).toEqual({ active: false });
    expect((await callMcp(server, delegated)).status).toBe(401);
    // An unknown refresh token changes nothing for anyone.
    const other = await personsGrant(server);
    const kept = (await exchange(agent, other.accessToken, { resource: mcp(server) })).access_token;
    expect((await token(server, { grant_type: "refresh_token", refresh_token: "unknown", client_id: other.app.client_id })).status).toBe(400);
    expect((await introspect(server, agent, kept)).json.active).toBe(true);
  });

  it("another client revoking the person's refresh token changes nothing", async () => {
    const grant = await personsGrant(server);
    const agent = await registerAgent(server);
    const delegated = (await exchange(agent, grant.accessToken, { resource: mcp(server) })).access_token;
    await postForm(server, "/api/auth/oauth2/revoke", { token: grant.refreshToken, token_type_hint: "refresh_token" }, basic(agent.id, agent.secret));
    expect((await introspect(server, agent, delegated)).json.active).toBe(true);
  });

  it("revoking the app on the account's authorized apps ends the tokens exchanged from its grant", async () => {
    const grant = await personsGrant(server, { resource: mcp(server) });
    const agent = await registerAgent(server);
    const delegated = (await exchange(agent, grant.accessToken)).access_token;
    expect((await callMcp(server, delegated)).status).toBe(200);
    const res = await server.api(`/api/authorized-apps/${encodeURIComponent(grant.app.client_id)}`, { method: "DELETE", cookie: grant.person.cookie });
    expect(res.status).toBe(204);
    expect((await introspect(server, agent, delegated)).json).toEqual({ active: false });
    expect((await callMcp(server, delegated)).status).toBe(401);
  });
});

describe("token exchange with short-lived access tokens", () => {
  // Seconds: long enough for a grant and an exchange on a busy machine, short enough to wait out.
  const TTL = 3;
  const shortLived = useTestServer({ ACCESS_TOKEN_TTL: String(TTL) });

  it("an expired subject token is invalid_request (RFC 8693 §2.2.2)", async () => {
    const grant = await personsGrant(shortLived, { resource: mcp(shortLived) });
    const agent = await registerAgent(shortLived);
    await new Promise((resolve) => setTimeout(resolve, TTL * 1000 + 1100));
    const res = await exchangeForm(shortLived, agent, grant.accessToken);
    expect(res.status).toBe(400);
    expect(res.json.error).toBe("invalid_request");
  });

  it("a delegated token lives no longer than its subject token; its expired record goes with the person's next exchange", async () => {
    const grant = await personsGrant(shortLived, { resource: mcp(shortLived) });
    const agent = await registerAgent(shortLived);
    const first = await exchange(agent, grant.accessToken);
    expect(first.expires_in).toBeLessThanOrEqual(TTL);
    const records = () => shortLived.db.selectFrom("oauthTokenExchange").select("id").where("userId", "=", grant.person.user.id).execute();
    expect(await records()).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, TTL * 1000 + 1100));
    expect((await introspect(shortLived, agent, first.access_token)).json).toEqual({ active: false });
    // A new access token from the app's refresh token, exchanged again: one record, the new one.
    const refreshed = await token(shortLived, { grant_type: "refresh_token", refresh_token: grant.refreshToken, client_id: grant.app.client_id });
    expect(refreshed.status, refreshed.text).toBe(200);
    const second = await exchange(agent, refreshed.json.access_token);
    expect(await records()).toEqual([{ id: decodeJwt(second.access_token).jti }]);
  });
});

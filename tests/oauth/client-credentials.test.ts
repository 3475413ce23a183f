import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { signUp, token } from "../helpers/oauth.js";
import { postForm } from "../helpers/server.js";

/**
 * The client credentials grant (RFC 6749 §4.4) for machine clients (plugins/machine-clients):
 * confidential clients only, no refresh token, no ID token, no person; with `resource`, an
 * RFC 9068 JWT for that resource, our /mcp included.
 */
const server = useTestServer();
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;

/** A machine client registered by a signed-in person (RFC 7591, no redirect URIs). */
async function machineClient(metadata: Record<string, unknown> = {}) {
  const person = await signUp(server);
  const res = await server.api("/api/auth/oauth2/register", {
    body: { client_name: "Nightly job", grant_types: ["client_credentials"], token_endpoint_auth_method: "client_secret_basic", ...metadata },
    headers: { cookie: person.cookie },
  });
  expect(res.status, res.text).toBe(201);
  const client = res.json as { client_id: string; client_secret: string; grant_types: string[]; redirect_uris?: string[] };
  return { person, client, auth: basic(client.client_id, client.client_secret) };
}

describe("client credentials grant", () => {
  it("is advertised in discovery", async () => {
    const res = await server.api("/.well-known/oauth-authorization-server");
    expect(res.json.grant_types_supported).toContain("client_credentials");
    expect(res.json.scopes_supported).toContain("service:read");
    const oidc = await server.api("/.well-known/openid-configuration");
    expect(oidc.json.grant_types_supported).toContain("client_credentials");
  });

  it("shows an agent how in /llms.txt", async () => {
    const text = await (await fetch(`${server.url}/llms.txt`)).text();
    expect(text).toContain("## Machine clients");
    expect(text).toContain("grant_type=client_credentials");
    expect(text).toContain(`resource=${server.url}/mcp`);
  });

  it("registers a machine client without redirect URIs when a person is signed in", async () => {
    const { client } = await machineClient();
    expect(client.grant_types).toEqual(["client_credentials"]);
    expect(client.redirect_uris ?? []).toEqual([]);
    expect(typeof client.client_secret).toBe("string");
  });

  it("counts a machine client against its owner's tier limit, and only the owner's clients", async () => {
    const { person } = await machineClient();
    // Someone else's clients do not count: another person's first machine client is accepted.
    await machineClient();
    const second = await server.api("/api/auth/oauth2/register", {
      body: { client_name: "Second job", grant_types: ["client_credentials"], token_endpoint_auth_method: "client_secret_basic" },
      headers: { cookie: person.cookie },
    });
    expect(second.status).toBe(403);
  });

  it("refuses a machine client from open registration (the sandbox registers none)", async () => {
    const res = await server.api("/api/auth/oauth2/register", { body: { client_name: "Anonymous job", grant_types: ["client_credentials"], token_endpoint_auth_method: "client_secret_basic" } });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe("invalid_client_metadata");
  });

  it("issues an opaque access token and nothing else, with client_secret_basic", async () => {
    const { client, auth } = await machineClient();
    const res = await token(server, { grant_type: "client_credentials" }, { authorization: auth });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("cache-control")).toContain("no-store");
    expect(res.json).toMatchObject({ token_type: "Bearer", scope: "service:read" });
    expect(typeof res.json.access_token).toBe("string");
    expect(res.json.access_token.split(".")).toHaveLength(1);
    expect(res.json.refresh_token).toBeUndefined();
    expect(res.json.id_token).toBeUndefined();
    const seen = await postForm(server, "/api/auth/oauth2/introspect", { token: res.json.access_token }, { authorization: auth });
    expect(seen.json).toMatchObject({ active: true, client_id: client.client_id, scope: "service:read" });
  });

  it("accepts client_secret_post from a client registered for it", async () => {
    const { client } = await machineClient({ token_endpoint_auth_method: "client_secret_post" });
    const res = await token(server, { grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret });
    expect(res.status, res.text).toBe(200);
    expect(res.json.scope).toBe("service:read");
  });

  it("refuses a wrong secret and a scope about a person", async () => {
    const { client, auth } = await machineClient();
    const wrong = await token(server, { grant_type: "client_credentials" }, { authorization: basic(client.client_id, "not-the-secret") });
    expect(wrong.status).toBe(401);
    expect(wrong.json.error).toBe("invalid_client");
    for (const scope of ["openid", "profile", "offline_access", "backup:read"]) {
      const res = await token(server, { grant_type: "client_credentials", scope }, { authorization: auth });
      expect(res.status, scope).toBe(400);
      expect(res.json.error).toBe("invalid_scope");
    }
  });

  it("refuses a client that was not registered for the grant", async () => {
    const person = await signUp(server);
    const reg = await server.api("/api/auth/oauth2/register", {
      body: { client_name: "Web app", application_type: "web", redirect_uris: ["https://app.example/cb"], token_endpoint_auth_method: "client_secret_basic", grant_types: ["authorization_code"] },
      headers: { cookie: person.cookie },
    });
    expect(reg.status, reg.text).toBe(201);
    const res = await token(server, { grant_type: "client_credentials" }, { authorization: basic(reg.json.client_id, reg.json.client_secret) });
    expect(res.status).toBe(400);
    expect(["unauthorized_client", "invalid_client"]).toContain(res.json.error);
  });

  it("gives an RFC 9068 JWT for our MCP server when asked with resource, naming the client as subject", async () => {
    const { client, auth } = await machineClient();
    const resource = `${server.url}/mcp`;
    const res = await token(server, { grant_type: "client_credentials", resource }, { authorization: auth });
    expect(res.status, res.text).toBe(200);
    expect(res.json.refresh_token).toBeUndefined();
    expect(decodeProtectedHeader(res.json.access_token).typ).toBe("at+jwt");
    const { payload } = await jwtVerify(res.json.access_token, createRemoteJWKSet(new URL(`${server.url}/api/auth/jwks`)), { issuer: server.url, audience: resource });
    expect(payload).toMatchObject({ sub: client.client_id, client_id: client.client_id, scope: "service:read" });
    expect(payload.bap_id).toBeUndefined();
  });

  it("refuses a resource nobody consented to for a machine client", async () => {
    const { auth } = await machineClient();
    const res = await token(server, { grant_type: "client_credentials", resource: "https://api.example.com/" }, { authorization: auth });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe("invalid_target");
  });

  it("lists only the service tool on /mcp for a machine token", async () => {
    const { auth } = await machineClient();
    const res = await token(server, { grant_type: "client_credentials", resource: `${server.url}/mcp` }, { authorization: auth });
    const headers = { authorization: `Bearer ${res.json.access_token}`, accept: "application/json, text/event-stream" };
    const init = await server.api("/mcp", { body: { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } }, headers });
    expect(init.status, init.text).toBe(200);
    const list = await server.api("/mcp", { body: { jsonrpc: "2.0", id: 2, method: "tools/list" }, headers: { ...headers, "mcp-protocol-version": "2025-06-18" } });
    expect(list.status, list.text).toBe(200);
    expect(list.json.result.tools.map((t: { name: string }) => t.name)).toEqual(["service_info"]);
    const call = await server.api("/mcp", { body: { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "list_authorized_apps", arguments: {} } }, headers: { ...headers, "mcp-protocol-version": "2025-06-18" } });
    expect(call.json.result?.isError ?? Boolean(call.json.error)).toBe(true);
  });
});

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { newIdentity, registerIdentity } from "../helpers/bap.js";
import { useTestServer } from "../helpers/fixtures.js";
import { authorize, pkce, REDIRECT, registerClient, signUp, token } from "../helpers/oauth.js";
import { postForm, type TestServer } from "../helpers/server.js";

const server = useTestServer();
const WEB_REDIRECT = "https://app.example/cb";

const resourceOf = (target: TestServer) => `${target.url}/mcp`;
const metadataUrlOf = (target: TestServer) => `${target.url}/.well-known/oauth-protected-resource/mcp`;

/** Sign up, register a client, authorize and exchange the code, with `resource` at both steps unless told. */
async function codeFlow(target: TestServer, opts: { resource?: string | null; confidential?: boolean; scope?: string } = {}) {
  const person = await signUp(target);
  const client = await registerClient(target, opts.confidential ? { application_type: "web", redirect_uris: [WEB_REDIRECT], token_endpoint_auth_method: "client_secret_basic" } : {});
  const redirectUri = opts.confidential ? WEB_REDIRECT : REDIRECT;
  const resource = opts.resource === undefined ? resourceOf(target) : opts.resource;
  const extra: Record<string, string> = resource ? { resource } : {};
  const { verifier, challenge } = pkce();
  const auth = await authorize(target, { clientId: client.client_id, cookie: person.cookie, challenge, redirectUri, scope: opts.scope ?? "openid profile backup:read offline_access", extra });
  expect(auth.code).toBeTruthy();
  const basic: Record<string, string> = opts.confidential ? { authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString("base64")}` } : {};
  const form: Record<string, string> = { grant_type: "authorization_code", code: auth.code!, redirect_uri: redirectUri, code_verifier: verifier, ...(opts.confidential ? {} : { client_id: client.client_id }), ...extra };
  const tokens = await token(target, form, basic);
  expect(tokens.status, tokens.text).toBe(200);
  return { person, client, basic, accessToken: tokens.json.access_token as string };
}

function mcpClient(target: TestServer, accessToken: string) {
  const transport = new StreamableHTTPClientTransport(new URL(resourceOf(target)), { requestInit: { headers: { authorization: `Bearer ${accessToken}` } } });
  return { client: new Client({ name: "mcp-test", version: "1.0.0" }), transport };
}

describe("our MCP server as a protected resource", () => {
  it("publishes RFC 9728 metadata naming this server as its authorization server", async () => {
    const res = await server.api("/.well-known/oauth-protected-resource/mcp");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.json).toMatchObject({ resource: resourceOf(server), authorization_servers: [server.url], bearer_methods_supported: ["header"] });
    expect(res.json.scopes_supported).toEqual(expect.arrayContaining(["openid", "profile"]));
    // Every advertised scope is one the authorization server offers.
    const as = await server.api("/.well-known/oauth-authorization-server");
    for (const scope of res.json.scopes_supported) expect(as.json.scopes_supported).toContain(scope);
  });

  it("answers a request without a token 401 with the metadata URL in WWW-Authenticate", async () => {
    const res = await server.api("/mcp", { body: { jsonrpc: "2.0", id: 1, method: "tools/list" }, headers: { accept: "application/json, text/event-stream" } });
    expect(res.status).toBe(401);
    expect(res.json).toMatchObject({ error: "invalid_token" });
    expect(res.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${metadataUrlOf(server)}"`);
  });

  it("issues a resource-bound JWT and serves the person's identities to the SDK's own client", async () => {
    const { person, accessToken } = await codeFlow(server);
    const id = newIdentity();
    expect((await registerIdentity(server, person.cookie, id)).status).toBe(201);

    expect(decodeProtectedHeader(accessToken).typ).toBe("at+jwt");
    const { payload } = await jwtVerify(accessToken, createRemoteJWKSet(new URL(`${server.url}/api/auth/jwks`)), { issuer: server.url, audience: resourceOf(server), typ: "at+jwt" });
    expect(payload).toMatchObject({ sub: person.user.id, client_id: expect.any(String), scope: expect.stringContaining("profile"), jti: expect.any(String), exp: expect.any(Number) });

    const { client, transport } = mcpClient(server, accessToken);
    await client.connect(transport);
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name).sort()).toEqual(["backup_status", "list_authorized_apps", "list_bap_identities"]);
      const identities = await client.callTool({ name: "list_bap_identities", arguments: {} });
      expect(identities.isError).toBeFalsy();
      expect(identities.structuredContent).toMatchObject({ identities: [{ bapId: id.bapId, primary: true, suspended: false }] });
      const apps = await client.callTool({ name: "list_authorized_apps", arguments: {} });
      expect((apps.structuredContent as { apps: unknown[] }).apps).toHaveLength(1);
      const backup = await client.callTool({ name: "backup_status", arguments: {} });
      expect(backup.structuredContent).toMatchObject({ hasBackup: false, userId: person.user.id, bapId: id.bapId });
    } finally {
      await client.close();
    }
  });

  it("offers only the tools the token's scopes cover", async () => {
    const { accessToken } = await codeFlow(server, { scope: "openid profile" });
    const { client, transport } = mcpClient(server, accessToken);
    await client.connect(transport);
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name).sort()).toEqual(["list_authorized_apps", "list_bap_identities"]);
      // Not listed, and not callable either: backup status needs backup:read.
      const backup = await client.callTool({ name: "backup_status", arguments: {} }).catch((err: Error) => ({ isError: true, thrown: err.message }));
      expect(backup.isError).toBe(true);
      expect(JSON.stringify(backup)).not.toContain("hasBackup");
    } finally {
      await client.close();
    }
    const none = await codeFlow(server, { scope: "openid" });
    const bare = mcpClient(server, none.accessToken);
    await bare.client.connect(bare.transport);
    try {
      expect((await bare.client.listTools()).tools).toEqual([]);
    } finally {
      await bare.client.close();
    }
  });

  it("shows each person only their own identities", async () => {
    const first = await codeFlow(server);
    const other = await signUp(server);
    const theirs = newIdentity();
    expect((await registerIdentity(server, other.cookie, theirs)).status).toBe(201);
    const { client, transport } = mcpClient(server, first.accessToken);
    await client.connect(transport);
    try {
      const identities = await client.callTool({ name: "list_bap_identities", arguments: {} });
      expect(identities.structuredContent).toEqual({ identities: [] });
    } finally {
      await client.close();
    }
  });

  it("refuses a token issued without the resource, and a tampered one", async () => {
    const { accessToken } = await codeFlow(server, { resource: null });
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    const accept = "application/json, text/event-stream";
    const res = await server.api("/mcp", { body: list, headers: { accept, authorization: `Bearer ${accessToken}` } });
    expect(res.status).toBe(401);
    expect(res.json).toMatchObject({ error: "invalid_token" });
    expect(res.headers.get("www-authenticate")).toMatch(new RegExp(`^Bearer error="invalid_token", .*resource_metadata="${metadataUrlOf(server)}"$`));

    const bound = (await codeFlow(server)).accessToken;
    const [header, payload, signature] = bound.split(".");
    const claims = JSON.parse(Buffer.from(payload!, "base64url").toString());
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: "someone-else" })).toString("base64url")}.${signature}`;
    expect((await server.api("/mcp", { body: list, headers: { accept, authorization: `Bearer ${forged}` } })).status).toBe(401);
    // The genuine one passes the same request: the refusals above are about the token.
    expect((await server.api("/mcp", { body: { jsonrpc: "2.0", id: 1, method: "ping" }, headers: { accept, authorization: `Bearer ${bound}` } })).status).toBe(200);
  });

  it("refuses a resource that is not https at the authorization server: invalid_target", async () => {
    const person = await signUp(server);
    const client = await registerClient(server);
    const auth = await authorize(server, { clientId: client.client_id, cookie: person.cookie, extra: { resource: "http://elsewhere.example/api" } });
    expect(auth.url.searchParams.get("error")).toBe("invalid_target");
  });

  it("introspection reports the token's audience", async () => {
    const { accessToken, basic } = await codeFlow(server, { confidential: true });
    const res = await postForm(server, "/api/auth/oauth2/introspect", { token: accessToken }, basic);
    expect(res.status).toBe(200);
    expect(res.json.active).toBe(true);
    const aud = res.json.aud;
    expect(Array.isArray(aud) ? aud : [aud]).toContain(resourceOf(server));
  });
});

import { randomUUID } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ClientCredentialsProvider, PrivateKeyJwtProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { exportJWK, generateKeyPair } from "jose";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { signUp } from "../helpers/oauth.js";

/**
 * The official MCP SDK client as a machine (client credentials, plugins/machine-clients): given
 * only our MCP server's URL and its credentials, it meets the 401, reads the protected-resource
 * metadata, gets a token for `/mcp` from this server and lists the tools a machine caller may
 * use (routes/mcp/tools.ts: `service_info`, never a tool about a person).
 */
const server = useTestServer();
const mcpUrl = () => new URL(`${server.url}/mcp`);

async function registerMachine(metadata: Record<string, unknown>) {
  const person = await signUp(server);
  const res = await server.api("/api/auth/oauth2/register", { body: { client_name: "MCP machine", grant_types: ["client_credentials"], ...metadata }, headers: { cookie: person.cookie } });
  expect(res.status, res.text).toBe(201);
  return res.json as { client_id: string; client_secret?: string };
}

/** Connects with `provider` alone (no token handed in), and answers the tools listed and the service_info result. */
async function connectAndList(provider: OAuthClientProvider) {
  const client = new Client({ name: "machine-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    const info = await client.callTool({ name: "service_info", arguments: {} });
    const personal = await client.callTool({ name: "list_authorized_apps", arguments: {} }).catch((err: Error) => ({ isError: true, thrown: err.message }));
    return { names: tools.map((t) => t.name), info: info.structuredContent as Record<string, unknown>, personal };
  } finally {
    await client.close();
  }
}

describe("the MCP SDK client as a machine client", () => {
  it("connects with PrivateKeyJwtProvider and lists the machine tools", async () => {
    const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
    const kid = randomUUID();
    const jwk = { ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" };
    const { client_id } = await registerMachine({ token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [jwk] } });
    const provider = new PrivateKeyJwtProvider({ clientId: client_id, privateKey: { ...(await exportJWK(privateKey)), kid, alg: "ES256" }, algorithm: "ES256", expectedIssuer: server.url });
    const seen = await connectAndList(provider);
    expect(seen.names).toEqual(["service_info"]);
    expect(seen.info).toMatchObject({ issuer: server.url, resource: `${server.url}/mcp` });
    expect(seen.personal.isError).toBe(true);
    expect(provider.tokens()?.refresh_token).toBeUndefined();
  });

  it("connects with ClientCredentialsProvider (client_secret_basic) and lists the machine tools", async () => {
    const { client_id, client_secret } = await registerMachine({ token_endpoint_auth_method: "client_secret_basic" });
    const provider = new ClientCredentialsProvider({ clientId: client_id, clientSecret: client_secret!, expectedIssuer: server.url });
    const seen = await connectAndList(provider);
    expect(seen.names).toEqual(["service_info"]);
    expect(seen.personal.isError).toBe(true);
  });
});

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { submitWith } from "../helpers/browser.js";
import { signInThroughPage, useBrowser, useCallbackServer, useTestServer } from "../helpers/fixtures.js";
import { useHttpsServer } from "../helpers/https-server.js";
import { signUp } from "../helpers/oauth.js";

/**
 * The whole MCP authorization loop as an MCP client runs it (the official SDK's client and its
 * `auth()`), with nothing handed to it but our /mcp URL: the 401 and its resource_metadata, the
 * RFC 9728 document, our authorization-server metadata, the client's identification (dynamic
 * registration, or a client ID metadata document it publishes), the authorization request
 * with PKCE and `resource`, sign-in and consent in a real browser, the code exchange, and the
 * tools. The conformance suite's authorization-server checks (npm run conformance:mcp) start
 * from a client we register; this starts from what an MCP client knows.
 */

const https = useHttpsServer();
// The client ID metadata document is served on loopback over the fixture's certificate.
const server = useTestServer(() => ({ OUTBOUND_ALLOW_PRIVATE: "true", OUTBOUND_EXTRA_CA_FILE: https.caFile }));
const browser = useBrowser();
const callback = useCallbackServer();

/** An MCP client's memory: what the SDK asks it to keep, and the URL it is asked to open. */
class MemoryProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  opened?: URL;
  constructor(
    readonly clientMetadata: OAuthClientMetadata,
    readonly clientMetadataUrl?: string,
  ) {}
  get redirectUrl() {
    return callback.redirectUri;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.opened = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const metadata = (): OAuthClientMetadata => ({
  client_name: "SDK MCP Client",
  redirect_uris: [callback.redirectUri],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
});

/** Runs the loop for `provider` and returns what the person and the client saw. */
async function connectThroughTheBrowser(provider: MemoryProvider) {
  const mcpUrl = new URL(`${server.url}/mcp`);
  const person = await signUp(server);

  // 1. Nothing but the URL: the first request is refused, and the SDK's auth() runs up to the redirect.
  const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  await expect(new Client({ name: "sdk-client", version: "1.0.0" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
  const opened = provider.opened!;
  expect(opened, "the SDK asked for a user agent").toBeDefined();
  expect(`${opened.origin}${opened.pathname}`).toBe(`${server.url}/api/auth/oauth2/authorize`);
  expect(opened.searchParams.get("resource")).toBe(mcpUrl.href);
  expect(opened.searchParams.get("code_challenge_method")).toBe("S256");
  expect(opened.searchParams.get("redirect_uri")).toBe(callback.redirectUri);

  // 2. The person: our sign-in page, our consent page (the redirect's origin, the localhost warning), Allow.
  const page = await browser.page();
  await page.goto(opened.href);
  await signInThroughPage(page, person);
  expect(new URL(page.url()).pathname).toBe("/consent");
  await expect(page.locator("strong").allTextContents()).resolves.toContain(new URL(callback.redirectUri).origin);
  await expect(page.getByRole("note").textContent()).resolves.toMatch(/on your own device/);
  await submitWith(page, "Allow");
  const back = new URL(page.url());
  expect(`${back.origin}${back.pathname}`).toBe(callback.redirectUri);
  expect(back.searchParams.get("iss")).toBe(server.url);
  const code = back.searchParams.get("code");
  expect(code).toBeTruthy();

  // 3. The client exchanges the code (PKCE verifier, resource) and connects with the token.
  await first.finishAuth(code!);
  const access = provider.saved?.access_token;
  expect(access).toBeTruthy();
  const { payload } = await jwtVerify(access!, createRemoteJWKSet(new URL(`${server.url}/api/auth/jwks`)), { issuer: server.url, audience: mcpUrl.href, typ: "at+jwt" });
  const client = new Client({ name: "sdk-client", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
  const tools = (await client.listTools()).tools.map((t) => t.name);
  await client.close();
  return { clientId: payload.client_id, tools };
}

describe("the official SDK's MCP client, from /mcp alone", () => {
  it("registers dynamically, authorizes in the browser with PKCE and resource, and lists the tools", async () => {
    const provider = new MemoryProvider(metadata());
    const { clientId, tools } = await connectThroughTheBrowser(provider);
    expect(provider.client?.client_id).toBeTruthy();
    expect(clientId).toBe(provider.client?.client_id);
    expect(tools).toEqual(expect.arrayContaining(["list_bap_identities", "backup_status", "list_authorized_apps"]));
  });

  it("identifies itself with a client ID metadata document when our metadata says we support them", async () => {
    const path = "/sdk-client/metadata.json";
    const documentUrl = `https://localhost:${https.port}${path}`;
    https.serve(path, { status: 200, headers: { "content-type": "application/json" }, body: JSON.stringify({ client_id: documentUrl, ...metadata() }) });
    const provider = new MemoryProvider(metadata(), documentUrl);
    const { clientId, tools } = await connectThroughTheBrowser(provider);
    // No registration happened: the document's URL is the client_id throughout.
    expect(provider.client?.client_id).toBe(documentUrl);
    expect(clientId).toBe(documentUrl);
    expect(https.requests).toContain(path);
    expect(tools).toContain("list_bap_identities");
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorizationRequest, authorizeUrl, REDIRECT, registerClient, signUp, token } from "../helpers/oauth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * RFC 6749 §3.3: an authorization request without `scope` gets the server's default, here
 * `openid profile` as far as the client registered them (plugins/default-scope), not every
 * scope the client holds (oauth-provider's default: backup write and refresh tokens included).
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** Authorize without `scope`, consent, and exchange the code: the granted token response. */
async function withoutScope(metadata: Record<string, unknown> = {}) {
  const person = await signUp(server);
  const client = await registerClient(server, metadata);
  const { params, verifier } = authorizationRequest(server, client.client_id);
  delete (params as Record<string, string | undefined>).scope;
  let res = await server.api(authorizeUrl(server, params), { cookie: person.cookie });
  let location = res.headers.get("location") ?? (res.json?.url as string | undefined) ?? null;
  expect(location, res.text).toBeTruthy();
  let consentScope: string | null = null;
  if (location!.startsWith("/consent") || location!.includes("/consent?")) {
    const query = new URL(location!, server.url).search.slice(1);
    consentScope = new URLSearchParams(query).get("scope");
    res = await server.api("/api/auth/oauth2/consent", { cookie: person.cookie, body: { accept: true, oauth_query: query } });
    location = res.headers.get("location") ?? (res.json?.url as string | undefined) ?? null;
  }
  const code = new URL(location!, server.url).searchParams.get("code");
  expect(code, location!).toBeTruthy();
  const tokens = await token(server, { grant_type: "authorization_code", code: code!, redirect_uri: REDIRECT, code_verifier: verifier, client_id: client.client_id });
  expect(tokens.status, tokens.text).toBe(200);
  return { consentScope, tokens: tokens.json as { scope: string; refresh_token?: string } };
}

describe("an authorization request without scope", () => {
  it("asks for sign-in and profile only, for a client registered without scope (which holds every scope)", async () => {
    const { consentScope, tokens } = await withoutScope({ scope: undefined });
    expect(consentScope).toBe("openid profile");
    expect(tokens.scope.split(" ").sort()).toEqual(["openid", "profile"]);
    expect(tokens.refresh_token).toBeUndefined();
  });

  it("is the same for a client that registered a narrower scope (the stored set is the server's union)", async () => {
    const { consentScope, tokens } = await withoutScope({ scope: "openid backup:read" });
    expect(consentScope).toBe("openid profile");
    expect(tokens.scope).not.toContain("backup");
  });

  it("changes nothing when scope is given", async () => {
    const person = await signUp(server);
    const client = await registerClient(server);
    const { params } = authorizationRequest(server, client.client_id, { scope: "openid email" });
    const res = await server.api(authorizeUrl(server, params), { cookie: person.cookie });
    const location = res.headers.get("location") ?? (res.json?.url as string) ?? "";
    expect(new URLSearchParams(new URL(location, server.url).search).get("scope")).toBe("openid email");
  });
});

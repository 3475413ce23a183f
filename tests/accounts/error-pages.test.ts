import { beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { authorizeUrl, pkce, REDIRECT, registerClient, signUp } from "../helpers/oauth.js";

/**
 * Content spoofing: pages on our origin never show text a link chose. /error speaks in our own
 * words for known codes and generically otherwise; /consent renders only for an authorization
 * request oauth-provider signed.
 */

const server = useTestServer();
let person: Awaited<ReturnType<typeof signUp>>;
let client: Awaited<ReturnType<typeof registerClient>>;

beforeAll(async () => {
  person = await signUp(server);
  client = await registerClient(server, { client_name: "Spoofed Bank" });
}, 30_000);

const SPOOF = "Your account is locked. Call 555-0100 now";

describe("/error", () => {
  it("shows our wording for a known code, never error_description", async () => {
    const res = await server.api(`/error?error=invalid_client&error_description=${encodeURIComponent(SPOOF)}`);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.text).toContain("<code>invalid_client</code>");
    expect(res.text).toContain("This application is not registered, or could not be identified.");
    expect(res.text).not.toContain("555-0100");
  });

  it("shows a generic sentence, and no code, for an unknown error code", async () => {
    const res = await server.api(`/error?error=${encodeURIComponent(SPOOF)}&error_description=${encodeURIComponent(SPOOF)}`);
    expect(res.status).toBe(400);
    expect(res.text).toContain("This request could not be completed.");
    expect(res.text).not.toContain("555-0100");
    expect(res.text).not.toContain("Error code:");
  });

  it("does not take a code from the object's prototype", async () => {
    const res = await server.api("/error?error=constructor");
    expect(res.status).toBe(400);
    expect(res.text).not.toContain("constructor");
  });
});

describe("/consent", () => {
  async function signedConsentUrl(scope = "openid profile") {
    const params = { response_type: "code", client_id: client.client_id, redirect_uri: REDIRECT, scope, state: "s", code_challenge: pkce().challenge, code_challenge_method: "S256" };
    const start = await server.api(authorizeUrl(server, params), { cookie: person.cookie, headers: { accept: "text/html" } });
    const url = new URL(start.json.url, server.url);
    expect(url.pathname).toBe("/consent");
    return url;
  }

  it("renders the consent page for a request oauth-provider signed", async () => {
    const url = await signedConsentUrl();
    const res = await server.api(url.pathname + url.search, { cookie: person.cookie });
    expect(res.status).toBe(200);
    expect(res.text).toContain("Spoofed Bank wants to access your account");
  });

  it("renders nothing of the client for an unsigned query with any scope", async () => {
    const res = await server.api(`/consent?client_id=${client.client_id}&scope=openid%20email%20offline_access`, { cookie: person.cookie });
    expect(res.status).toBe(400);
    expect(res.text).not.toContain("Spoofed Bank");
    expect(res.text).toContain("This consent link is invalid or has expired.");
  });

  it("renders nothing for a forged signature", async () => {
    const res = await server.api(`/consent?client_id=${client.client_id}&scope=offline_access&exp=9999999999&sig=AAAA&ba_param=client_id&ba_param=scope&ba_param=exp`, { cookie: person.cookie });
    expect(res.status).toBe(400);
    expect(res.text).not.toContain("Spoofed Bank");
  });

  it("renders nothing when a signed query's scope was changed", async () => {
    const url = await signedConsentUrl("openid");
    url.searchParams.set("scope", "openid email offline_access");
    const res = await server.api(url.pathname + url.search, { cookie: person.cookie });
    expect(res.status).toBe(400);
    expect(res.text).not.toContain("Spoofed Bank");
  });

  it("shows the signed scopes, not unsigned extra ones", async () => {
    const url = await signedConsentUrl("openid");
    url.searchParams.append("scope", "offline_access");
    const res = await server.api(url.pathname + url.search, { cookie: person.cookie });
    // A second scope parameter is outside the signed set of values: the signature no longer holds.
    expect(res.status).toBe(400);
    expect(res.text).not.toContain("Stay signed in");
  });
});

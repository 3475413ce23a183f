import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { authorize, authorizeUrl, pkce, REDIRECT, registerClient, signUp } from "../helpers/oauth.js";

const server = useTestServer();

async function target(clientId: string, cookie: string | undefined, extra: Record<string, string>) {
  const params = { response_type: "code", client_id: clientId, redirect_uri: REDIRECT, scope: "openid profile", state: "s1", code_challenge: pkce().challenge, code_challenge_method: "S256", ...extra };
  const res = await server.api(authorizeUrl(server, params), { cookie, headers: { accept: "text/html" } });
  const location = res.status >= 300 && res.status < 400 ? res.headers.get("location") : res.json?.url;
  expect(location, JSON.stringify(res.json)).toBeTruthy();
  return new URL(location!, server.url);
}

describe("authorize prompt and max_age", () => {
  it("sends a visitor without a session to our sign-in page with the signed request", async () => {
    const client = await registerClient(server);
    const url = await target(client.client_id, undefined, {});
    expect(url.origin).toBe(server.url);
    expect(url.pathname).toBe("/sign-in");
    expect(url.searchParams.get("sig")).toBeTruthy();
    expect(url.searchParams.get("client_id")).toBe(client.client_id);
  });

  it("prompt=none without a session answers login_required at the redirect URI", async () => {
    const client = await registerClient(server);
    const url = await target(client.client_id, undefined, { prompt: "none" });
    expect(url.origin + url.pathname).toBe(REDIRECT);
    expect(url.searchParams.get("error")).toBe("login_required");
    expect(url.searchParams.get("state")).toBe("s1");
    expect(url.searchParams.get("iss")).toBe(server.url);
  });

  it("prompt=none with a session but no consent answers consent_required", async () => {
    const person = await signUp(server);
    const client = await registerClient(server);
    const url = await target(client.client_id, person.cookie, { prompt: "none" });
    expect(url.searchParams.get("error")).toBe("consent_required");
  });

  it("prompt=none after consent returns a code silently", async () => {
    const person = await signUp(server);
    const client = await registerClient(server);
    await authorize(server, { clientId: client.client_id, cookie: person.cookie, scope: "openid profile" });
    const url = await target(client.client_id, person.cookie, { prompt: "none" });
    expect(url.origin + url.pathname).toBe(REDIRECT);
    expect(url.searchParams.get("code")).toBeTruthy();
  });

  it("remembers consent, and prompt=consent asks again", async () => {
    const person = await signUp(server);
    const client = await registerClient(server);
    await authorize(server, { clientId: client.client_id, cookie: person.cookie, scope: "openid profile" });
    const again = await target(client.client_id, person.cookie, {});
    expect(again.searchParams.get("code")).toBeTruthy();
    const forced = await target(client.client_id, person.cookie, { prompt: "consent" });
    expect(forced.pathname).toBe("/consent");
  });

  it("prompt=login sends a signed-in person back to the sign-in page", async () => {
    const person = await signUp(server);
    const client = await registerClient(server);
    const url = await target(client.client_id, person.cookie, { prompt: "login" });
    expect(url.pathname).toBe("/sign-in");
  });

  it("max_age=0 asks for a fresh sign-in", async () => {
    const person = await signUp(server);
    const client = await registerClient(server);
    await authorize(server, { clientId: client.client_id, cookie: person.cookie, scope: "openid profile" });
    await new Promise((r) => setTimeout(r, 1100));
    const url = await target(client.client_id, person.cookie, { max_age: "0" });
    expect(url.pathname).toBe("/sign-in");
  });

  it("Deny at consent answers access_denied with state", async () => {
    const person = await signUp(server);
    const client = await registerClient(server);
    const result = await authorize(server, { clientId: client.client_id, cookie: person.cookie, consent: false });
    expect(result.url.origin + result.url.pathname).toBe(REDIRECT);
    expect(result.url.searchParams.get("error")).toBe("access_denied");
    expect(result.url.searchParams.get("state")).toBe(result.state);
    expect(result.code).toBeNull();
  });
});

import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { fillByLabel, submitWith } from "../helpers/browser.js";
import { signInThroughPage, useBrowser, useCallbackServer, useTestServer } from "../helpers/fixtures.js";
import { authorizationRequest as authRequest, registerClient, signUp, token } from "../helpers/oauth.js";
import { uniqueEmail } from "../helpers/server.js";

const server = useTestServer();
const browser = useBrowser();
const callback = useCallbackServer();

const SCOPE = "openid profile email offline_access";
/** What the consent page must say for each scope: words a person understands, not the scope id. */
const SCOPE_IN_WORDS: Record<string, RegExp> = {
  openid: /who you are/i,
  profile: /your profile/i,
  email: /e-mail address/i,
  offline_access: /while you are away/i,
};

/** A native app (registerClient's defaults: public, PKCE) that redirects to our callback server. */
const publicClient = (name: string) => registerClient(server, { client_name: name, redirect_uris: [callback.redirectUri] });

/** An authorization request as a native app would build it, back to our callback server. */
const authorizationRequest = (clientId: string, extra: Record<string, string> = {}) => authRequest(server, clientId, { redirectUri: callback.redirectUri, scope: SCOPE, extra });

/** A person (signed up over the API), an app, and a signed-out browser sent to the app's authorization request. */
async function signedOutAtAuthorize(appName: string) {
  const person = await signUp(server);
  const client = await publicClient(appName);
  const page = await browser.page();
  const request = authorizationRequest(client.client_id);
  await page.goto(request.url);
  return { person, client, page, request };
}

/** Every URL the page's main frame showed, to prove which pages a flow did (not) pass through. */
function recordNavigations(page: Page): string[] {
  const seen: string[] = [];
  page.on("framenavigated", (frame) => {
    if (frame === page.mainFrame()) seen.push(frame.url());
  });
  return seen;
}

function decodeJwt(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString("utf8"));
}

describe("sign-up page", () => {
  it("labels every field and creates a signed-in account", async () => {
    const page = await browser.page();
    const res = await page.goto(`${server.url}/sign-up`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()["content-type"]).toMatch(/^text\/html/);
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Create an account");

    // Every visible input has a label that names it (WCAG 1.3.1 / 4.1.2).
    const unlabelled = await page.$$eval("input:not([type=hidden])", (inputs) =>
      inputs.filter((i) => !(i as HTMLInputElement).labels?.length).map((i) => (i as HTMLInputElement).name),
    );
    expect(unlabelled).toEqual([]);
    const names = await page.$$eval("form input:not([type=hidden])", (inputs) => inputs.map((i) => (i as HTMLInputElement).name));
    expect(names).toEqual(["name", "email", "password"]);

    const email = uniqueEmail("page-signup");
    await fillByLabel(page, "Name", "Page Person");
    await fillByLabel(page, "E-mail", email);
    await fillByLabel(page, "Password", "correct horse battery staple");
    await submitWith(page, "Create account");

    expect(new URL(page.url()).pathname).not.toBe("/sign-up");
    expect(await page.getByRole("alert").count()).toBe(0);
    // The browser now carries a session for the new account.
    const session = await page.request.get(`${server.url}/api/auth/get-session`);
    expect(session.status()).toBe(200);
    expect((await session.json())?.user).toMatchObject({ email, name: "Page Person" });
  });

  it("says so, on the page, when the e-mail already has an account", async () => {
    const existing = await signUp(server);
    const page = await browser.page();
    await page.goto(`${server.url}/sign-up`);
    await fillByLabel(page, "Name", "Someone Else");
    await fillByLabel(page, "E-mail", existing.email);
    await fillByLabel(page, "Password", "another long password");
    await submitWith(page, "Create account");
    expect(new URL(page.url()).pathname).toBe("/sign-up");
    await expect(page.getByRole("alert").textContent()).resolves.toMatch(/already exists/i);
    // The form keeps what was typed, except the password.
    await expect(page.getByLabel("E-mail", { exact: true }).inputValue()).resolves.toBe(existing.email);
    await expect(page.getByLabel("Password", { exact: true }).inputValue()).resolves.toBe("");
  });
});

describe("page forms and cross-site posts", () => {
  it("refuses form posts that a browser marks as coming from another site", async () => {
    const person = await signUp(server);
    const body = new URLSearchParams({ email: person.email, password: person.password }).toString();
    const cases: Array<Record<string, string>> = [
      { origin: "https://evil.example", "sec-fetch-site": "cross-site" },
      // Under referrer-policy no-referrer a browser sends Origin: null; only Sec-Fetch-Site can vouch for it.
      { origin: "null", "sec-fetch-site": "cross-site" },
      { origin: "null" },
    ];
    for (const headers of cases) {
      const res = await fetch(`${server.url}/sign-in`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body,
        redirect: "manual",
      });
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
      expect(res.headers.getSetCookie()).toEqual([]);
    }
  });
});

describe("authorization through the pages", () => {
  it("signs in, asks consent in words, and returns code, state and iss to the app; consent is remembered", async () => {
    const person = await signUp(server);
    const client = await publicClient("Pages Test App");
    const page = await browser.page();
    const visited = recordNavigations(page);
    const request = authorizationRequest(client.client_id);

    // 1. Signed out: the authorize endpoint sends the browser to our sign-in page.
    const landing = await page.goto(request.url);
    expect(landing?.status()).toBe(200);
    expect(new URL(page.url()).origin).toBe(server.url);
    expect(new URL(page.url()).pathname).toBe("/sign-in");
    expect(await page.locator('form input[name="email"]').count()).toBe(1);
    expect(await page.locator('form input[name="password"]').count()).toBe(1);

    // 2. Sign in: the consent page names the client and each scope in words.
    await signInThroughPage(page, person);
    expect(new URL(page.url()).pathname).toBe("/consent");
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toContain("Pages Test App");
    const items = await page.locator("ul.scopes li").allTextContents();
    expect(items).toHaveLength(4);
    for (const [scope, words] of Object.entries(SCOPE_IN_WORDS)) {
      expect(items.some((item) => words.test(item)), `scope ${scope} shown in words`).toBe(true);
    }
    for (const item of items) expect(SCOPE.split(" ")).not.toContain(item.trim());
    const buttons = (await page.getByRole("button").allTextContents()).map((b) => b.trim());
    expect(buttons).toEqual(["Allow", "Deny"]);
    expect(callback.hits.some((u) => u.searchParams.get("state") === request.state)).toBe(false);

    // 3. Allow: the browser arrives at the app's redirect URI with code, state and iss (RFC 9207).
    await submitWith(page, "Allow");
    const back = new URL(page.url());
    expect(`${back.origin}${back.pathname}`).toBe(callback.redirectUri);
    expect(back.searchParams.get("state")).toBe(request.state);
    expect(back.searchParams.get("iss")).toBe(server.url);
    expect(back.searchParams.get("error")).toBeNull();
    const code = back.searchParams.get("code");
    expect(code).toBeTruthy();
    expect(callback.hits.at(-1)?.href).toBe(back.href);
    await expect(page.locator("body").textContent()).resolves.toContain("Back at the application.");

    // 4. The app exchanges the code with its PKCE verifier.
    const tokens = await token(server, {
      grant_type: "authorization_code",
      code: code!,
      redirect_uri: callback.redirectUri,
      client_id: client.client_id,
      code_verifier: request.verifier,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.headers.get("cache-control")).toBe("no-store");
    expect(tokens.json).toMatchObject({ token_type: "Bearer", scope: SCOPE });
    expect(typeof tokens.json.access_token).toBe("string");
    expect(typeof tokens.json.refresh_token).toBe("string");
    const idToken = decodeJwt(tokens.json.id_token);
    expect(idToken).toMatchObject({ iss: server.url, aud: client.client_id, nonce: request.nonce, sub: person.user.id });
    const userinfo = await server.api("/api/auth/oauth2/userinfo", { headers: { authorization: `Bearer ${tokens.json.access_token}` } });
    expect(userinfo.status).toBe(200);
    expect(userinfo.json).toMatchObject({ sub: person.user.id, email: person.email });

    // 5. Same person, same client, same scopes: straight back to the app, no consent page.
    const again = authorizationRequest(client.client_id);
    const before = visited.length;
    await page.goto(again.url);
    await page.waitForURL((u) => u.href.startsWith(callback.redirectUri));
    const second = new URL(page.url());
    expect(second.searchParams.get("state")).toBe(again.state);
    expect(second.searchParams.get("iss")).toBe(server.url);
    expect(second.searchParams.get("code")).toBeTruthy();
    expect(second.searchParams.get("code")).not.toBe(code);
    const path = visited.slice(before).map((u) => new URL(u).pathname);
    expect(path).not.toContain("/consent");
    expect(path).not.toContain("/sign-in");
    const exchanged = await token(server, {
      grant_type: "authorization_code",
      code: second.searchParams.get("code")!,
      redirect_uri: callback.redirectUri,
      client_id: client.client_id,
      code_verifier: again.verifier,
    });
    expect(exchanged.status).toBe(200);
  });

  it("a wrong password shows an error on the page and keeps the authorization request", async () => {
    const { person, page, request } = await signedOutAtAuthorize("Retry App");
    await signInThroughPage(page, { ...person, password: "not the password at all" });
    expect(new URL(page.url()).pathname).toBe("/sign-in");
    await expect(page.getByRole("alert").textContent()).resolves.toMatch(/do not match/i);
    expect(await page.locator('input[name="email"]').inputValue()).toBe(person.email);
    // The second try continues the same request: consent, then back to the app with its state.
    await signInThroughPage(page, person);
    expect(new URL(page.url()).pathname).toBe("/consent");
    await submitWith(page, "Allow");
    expect(new URL(page.url()).searchParams.get("state")).toBe(request.state);
  });

  it("Deny sends access_denied with the state back to the app, and no code", async () => {
    const { person, client, page, request } = await signedOutAtAuthorize("Denied App");
    await signInThroughPage(page, person);
    expect(new URL(page.url()).pathname).toBe("/consent");
    await submitWith(page, "Deny");

    const back = new URL(page.url());
    expect(`${back.origin}${back.pathname}`).toBe(callback.redirectUri);
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("state")).toBe(request.state);
    expect(back.searchParams.get("code")).toBeNull();

    // Denying is not remembered as consent: the next request asks again.
    const next = authorizationRequest(client.client_id);
    await page.goto(next.url);
    expect(new URL(page.url()).pathname).toBe("/consent");
  });

  it("shows our error page, never a redirect, for an unknown client", async () => {
    const page = await browser.page();
    const hitsBefore = callback.hits.length;
    const res = await page.goto(authorizationRequest("no-such-client").url);
    const at = new URL(page.url());
    expect(at.origin).toBe(server.url);
    expect(at.pathname).toBe("/error");
    expect(res?.status()).toBe(400);
    expect(res?.headers()["content-type"]).toMatch(/^text\/html/);
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Something is wrong with this request");
    await expect(page.locator("code").textContent()).resolves.toBe("invalid_client");
    expect(callback.hits.length).toBe(hitsBefore);
  });

  it("shows our error page, never a redirect, for a redirect URI that was not registered", async () => {
    const client = await publicClient("Mismatch App");
    const page = await browser.page();
    const hitsBefore = callback.hits.length;
    // Same host and port as the registered URI but another path, and another host: neither is an exact match.
    for (const unregistered of [`http://127.0.0.1:${callback.port}/stolen`, "https://evil.example/callback"]) {
      const res = await page.goto(authorizationRequest(client.client_id, { redirect_uri: unregistered }).url);
      const at = new URL(page.url());
      expect(at.origin, unregistered).toBe(server.url);
      expect(at.pathname).toBe("/error");
      expect(res?.status()).toBe(400);
      expect(res?.headers()["content-type"]).toMatch(/^text\/html/);
      await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Something is wrong with this request");
      await expect(page.getByRole("alert").textContent()).resolves.toMatch(/redirect/i);
      await expect(page.locator("code").textContent()).resolves.toMatch(/^invalid_\w+$/);
    }
    expect(callback.hits.length).toBe(hitsBefore);
  });
});

import { mkdtempSync, rmSync } from "node:fs";
import { createServer as createNetServer, type AddressInfo, type Server as NetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, BrowserContextOptions, CDPSession, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import type { StartOptions } from "../../server.js";
import { fillByLabel, launchBrowser, startCallbackServer, submitWith, type CallbackServer } from "./browser.js";
import { token } from "./oauth.js";
import { startTestServer, uniqueEmail, type TestServer } from "./server.js";

/**
 * Vitest fixtures shared by the test files. Each registers its own hooks in the file or
 * `describe` block it is called from: started in beforeAll, stopped in afterAll (and browser
 * profiles closed after each test), so a file says what it runs, not how to start and stop it.
 */

/**
 * Stands for something a beforeAll hook creates: reads go to the real thing once it exists.
 * Reading it earlier (at module level, outside any test or hook) throws rather than misleads.
 */
function lateBound<T extends object>(what: string) {
  let current: T | undefined;
  const value = new Proxy({} as T, {
    get(_, key) {
      if (!current) throw new Error(`${what} is not running here: use it inside a test or hook`);
      return Reflect.get(current, key, current);
    },
  });
  return {
    value,
    get current() {
      return current;
    },
    set current(next: T | undefined) {
      current = next;
    },
  };
}

type Env = Record<string, string>;

/**
 * A test server (startTestServer) for the enclosing file or describe block. `env` may be a
 * function, for settings known only in beforeAll (a port fixed in advance, an upstream's issuer).
 */
export function useTestServer(env: Env | (() => Env | Promise<Env>) = {}, options: StartOptions = {}): TestServer {
  const server = lateBound<TestServer>("the test server");
  beforeAll(async () => {
    server.current = await startTestServer(typeof env === "function" ? await env() : env, options);
  });
  afterAll(async () => {
    await server.current?.close();
    server.current = undefined;
  });
  return server.value;
}

/** A relying party's loopback redirect URI (startCallbackServer) for the enclosing file or block. */
export function useCallbackServer(path?: string): CallbackServer {
  const callback = lateBound<CallbackServer>("the callback server");
  beforeAll(async () => {
    callback.current = await startCallbackServer(path);
  });
  afterAll(async () => {
    await callback.current?.close();
    callback.current = undefined;
  });
  return callback.value;
}

/** What useBrowser gives a test: fresh browser profiles, each closed when the test ends. */
export interface BrowserFixture {
  /** A fresh profile: its own cookie jar, so it starts signed out everywhere. */
  context(options?: BrowserContextOptions): Promise<BrowserContext>;
  /** A page in a fresh profile. */
  page(options?: BrowserContextOptions): Promise<Page>;
  /**
   * A page in a fresh profile with a virtual platform authenticator (the DevTools WebAuthn
   * domain) that holds resident keys and verifies the user.
   */
  pageWithAuthenticator(): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }>;
}

/** Headless Chromium (launchBrowser) for the enclosing file or block. */
export function useBrowser(): BrowserFixture {
  const browser = lateBound<Awaited<ReturnType<typeof launchBrowser>>>("the browser");
  const contexts: BrowserContext[] = [];
  beforeAll(async () => {
    browser.current = await launchBrowser();
  });
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await browser.current?.close();
    browser.current = undefined;
  });
  async function context(options?: BrowserContextOptions) {
    const created = await browser.value.newContext(options);
    contexts.push(created);
    return created;
  }
  async function page(options?: BrowserContextOptions) {
    return (await context(options)).newPage();
  }
  async function pageWithAuthenticator() {
    const opened = await page();
    const cdp = await opened.context().newCDPSession(opened);
    await cdp.send("WebAuthn.enable");
    const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    return { page: opened, cdp, authenticatorId };
  }
  return { context, page, pageWithAuthenticator };
}

/**
 * Signs a new person up through the sign-up page (fields found by their labels, so a missing
 * label fails the test) and returns who they are. Where the page lands is the caller's to check.
 */
export async function signUpWithForm(server: TestServer, page: Page, opts: { name?: string; email?: string; password?: string } = {}) {
  const email = opts.email ?? uniqueEmail("page");
  const password = opts.password ?? "correct horse battery staple";
  await page.goto(`${server.url}/sign-up`);
  await fillByLabel(page, "Name", opts.name ?? "Page Person");
  await fillByLabel(page, "E-mail", email);
  await fillByLabel(page, "Password", password);
  await submitWith(page, "Create account");
  const user = await server.db.selectFrom("user").select(["id"]).where("email", "=", email).executeTakeFirstOrThrow();
  return { email, password, userId: user.id as string };
}

/**
 * Temporary directories for one file, removed after its tests. `prefix` names them, so a
 * leftover (after a crash) says which file made it.
 */
export function useTempDirs(prefix: string): () => string {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
}

/** Signs in with e-mail and password on the sign-in page, which the browser must be on already. */
export async function signInThroughPage(page: Page, person: { email: string; password: string }) {
  expect(new URL(page.url()).pathname).toBe("/sign-in");
  await fillByLabel(page, "E-mail", person.email);
  await fillByLabel(page, "Password", person.password);
  await submitWith(page, "Sign in");
}

/**
 * The browser is back at the app: checks it arrived at the redirect URI with the request's
 * state, then redeems the code with the PKCE verifier (RFC 6749 §4.1.3, RFC 7636 §4.5) and
 * returns the token endpoint's answer for the test to check.
 */
export async function redeemCode(server: TestServer, back: URL, request: { redirectUri: string; clientId: string; state: string; verifier: string }) {
  expect(`${back.origin}${back.pathname}`).toBe(request.redirectUri);
  expect(back.searchParams.get("state")).toBe(request.state);
  const code = back.searchParams.get("code") ?? "";
  return token(server, { grant_type: "authorization_code", code, redirect_uri: request.redirectUri, client_id: request.clientId, code_verifier: request.verifier });
}

/**
 * Something listening on `host` that counts the connections it gets and drops each at once:
 * an inside address that a guarded outbound fetch must never reach.
 */
export function useCountingListener(host: string) {
  const state = { port: 0, connections: 0 };
  let listener: NetServer | undefined;
  beforeAll(async () => {
    listener = createNetServer((socket) => {
      state.connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener!.listen(0, host, resolve));
    state.port = (listener.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => listener?.close(resolve));
  });
  return state;
}

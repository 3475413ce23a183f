import { createServer, type Server } from "node:http";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

/** Debian's `chromium` package; we never download a browser. */
export const CHROMIUM_PATH = "/usr/bin/chromium";

/** Headless Chromium with no network chatter of its own: the only traffic is the test's. */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/**
 * A relying party's loopback redirect URI (RFC 8252 §7.3): a tiny HTTP server that records
 * every request and answers with a plain page, so the browser really arrives somewhere.
 */
export async function startCallbackServer(path = "/callback") {
  const hits: URL[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "127.0.0.1"}`);
    // The browser's own favicon probe is not the authorization server talking to us.
    if (url.pathname !== "/favicon.ico") hits.push(url);
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
    res.end("<!doctype html><title>Callback</title><p>Back at the application.</p>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const redirectUri = `http://127.0.0.1:${port}${path}`;
  return {
    redirectUri,
    port,
    /** Every request this server received, on any path, in order. */
    get hits(): readonly URL[] {
      return [...hits];
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type CallbackServer = Awaited<ReturnType<typeof startCallbackServer>>;

/** Fills a form field found by its visible label, so a missing label fails the test. */
export async function fillByLabel(page: Page, label: string | RegExp, value: string) {
  await page.getByLabel(label, { exact: typeof label === "string" }).fill(value);
}

/**
 * Clicks the named submit button and waits until the page that the form's answer leads to
 * (after any redirects) has loaded. The wait starts before the click so no navigation is missed.
 */
export async function submitWith(page: Page, button: string) {
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.getByRole("button", { name: button, exact: true }).click()]);
}

/** Puts the `name=value` pairs of a Cookie header (as cookiesOf gives them) into a browser profile, for `url`. */
export async function addCookies(context: BrowserContext, cookie: string, url: string) {
  const pairs = cookie.split("; ").map((pair) => {
    const [name, ...value] = pair.split("=");
    return { name: name!, value: value.join("="), url };
  });
  await context.addCookies(pairs);
}

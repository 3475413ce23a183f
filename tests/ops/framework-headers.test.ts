import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STYLE } from "../../routes/pages/layout.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * Headers set by Hono's own middleware where we once wrote them by hand (hono/secure-headers on
 * the pages, hono/etag on the OpenAPI document and the page scripts): the same names, values
 * and 304 answers as the hand-written code gave, except that a 304 no longer repeats
 * Content-Type (RFC 9110 §15.4.5 does not list it among a 304's fields; a cache keeps the stored one).
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
}, 60_000);
afterAll(async () => {
  await server?.close();
});

const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  `style-src 'sha256-${createHash("sha256").update(STYLE).digest("base64")}'`,
  "img-src 'self' https: http:",
  "connect-src 'self'",
  "base-uri 'none'",
  "object-src 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** The rest of hono/secure-headers' set, which the pages never sent. */
const NOT_SENT = ["x-xss-protection", "origin-agent-cluster", "x-download-options", "x-dns-prefetch-control", "x-permitted-cross-domain-policies", "cross-origin-opener-policy", "referrer-policy", "strict-transport-security"];

describe("pages: security headers (hono/secure-headers)", () => {
  it("every HTML page carries exactly the policy, X-Frame-Options DENY and nosniff, and nothing else of the set", async () => {
    for (const path of ["/sign-in", "/sign-up", "/error?error=invalid_request"]) {
      const res = await server.app.request(path);
      expect(res.headers.get("content-type"), path).toMatch(/^text\/html/);
      expect(res.headers.get("content-security-policy"), path).toBe(PAGE_CSP);
      expect(res.headers.get("x-frame-options"), path).toBe("DENY");
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(NOT_SENT.filter((name) => res.headers.has(name)), path).toEqual([]);
    }
  });

  it("answers that are not HTML get none of them", async () => {
    const res = await server.app.request("/no-such-page");
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(res.headers.has("content-security-policy")).toBe(false);
    expect(res.headers.has("x-frame-options")).toBe(false);
  });
});

describe("revalidation by ETag (hono/etag)", () => {
  /** GET it, then again with If-None-Match in the forms a cache sends: the same 304, with the headers a cache keeps. */
  async function revalidates(path: string, kept: string[]) {
    const first = await server.app.request(path);
    expect(first.status).toBe(200);
    const tag = first.headers.get("etag")!;
    expect(tag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    for (const ifNoneMatch of [tag, `W/${tag}`, `"other", ${tag}`]) {
      const again = await server.app.request(path, { headers: { "if-none-match": ifNoneMatch } });
      expect(again.status, ifNoneMatch).toBe(304);
      expect(await again.text()).toBe("");
      for (const name of ["etag", ...kept]) expect(again.headers.get(name), `${ifNoneMatch}: ${name}`).toBe(first.headers.get(name));
    }
    expect((await server.app.request(path, { headers: { "if-none-match": '"other"' } })).status).toBe(200);
  }

  it("GET /api/openapi.json", async () => {
    await revalidates("/api/openapi.json", ["cache-control", "access-control-allow-origin"]);
  });

  it("GET /assets/<name>.<hash>.js", async () => {
    const page = await (await server.app.request("/api/reference")).text();
    const src = /src="(\/assets\/[^"]+\.js)"/.exec(page)?.[1];
    expect(src).toBeTruthy();
    await revalidates(src!, ["cache-control", "vary", "x-content-type-options", "cross-origin-resource-policy"]);
  });
});

import { describe, expect, it } from "vitest";
import { brandingPath, ownerWithClient, PNG_1PX, tierHolders } from "../helpers/branding.js";
import { useTestServer } from "../helpers/fixtures.js";
import { useHttpsServer } from "../helpers/https-server.js";
import { signUp } from "../helpers/oauth.js";
import type { TestServer } from "../helpers/server.js";

/**
 * PUT/GET/DELETE /api/clients/{clientId}/branding and the logo route, against a real server:
 * the owner's tier from the real tier service (its NFT-ownership source faked through its
 * interface), the logo fetched through the guarded fetcher from a local HTTPS server.
 */
const https = useHttpsServer();
const holders = tierHolders();
const MAX = 4096;
const server = useTestServer(() => ({ OUTBOUND_ALLOW_PRIVATE: "true", OUTBOUND_EXTRA_CA_FILE: https.caFile, BRANDING_LOGO_MAX_BYTES: String(MAX) }), { subscriptions: { ownership: holders.ownership } });

const logoAt = (path: string) => `https://localhost:${https.port}${path}`;
const put = (s: TestServer, cookie: string, clientId: string, body: unknown) => s.api(brandingPath(clientId), { method: "PUT", cookie, body });
const brand = (over: Record<string, unknown> = {}) => ({ displayName: "Acme Books", accentColor: "#1d4ed8", supportUrl: "https://help.acme.example/", ...over });

function expectProblem(res: { status: number; headers: Headers; json: any }, status: number) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect(res.json).toMatchObject({ status, title: expect.any(String), detail: expect.any(String), type: expect.any(String) });
}

describe("the owner with a Plus or Pro tier", () => {
  it("sets the brand, reads it back, and the logo is fetched once, stored and served by us with caching headers", async () => {
    https.serve("/logo.png", { status: 200, headers: { "content-type": "image/png" }, body: PNG_1PX });
    const owner = await ownerWithClient(server, holders, "plus");
    const res = await put(server, owner.cookie, owner.clientId, brand({ logoUri: logoAt("/logo.png"), accentColor: "#1D4ED8" }));
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.json).toMatchObject({ clientId: owner.clientId, displayName: "Acme Books", accentColor: "#1d4ed8", supportUrl: "https://help.acme.example/", logoUri: logoAt("/logo.png"), shown: true, whiteLabel: false });
    const logoUrl: string = res.json.logoUrl;
    expect(logoUrl).toMatch(new RegExp(`^/api/clients/${owner.clientId}/branding/logo\\?v=[0-9a-f]{16}$`));

    const read = await server.api(brandingPath(owner.clientId), { cookie: owner.cookie });
    expect(read.status).toBe(200);
    expect(read.json).toEqual(res.json);

    // The same logoUri again: kept, not fetched a second time.
    const fetchedBefore = https.requests.filter((p) => p === "/logo.png").length;
    expect(fetchedBefore).toBe(1);
    expect((await put(server, owner.cookie, owner.clientId, brand({ displayName: "Acme Books 2", logoUri: logoAt("/logo.png") }))).status).toBe(200);
    expect(https.requests.filter((p) => p === "/logo.png").length).toBe(1);

    // Served by us, anonymously (a sign-in page's visitor has no session), as the image it is.
    const logo = await fetch(server.url + logoUrl);
    expect(logo.status).toBe(200);
    expect(logo.headers.get("content-type")).toBe("image/png");
    expect(logo.headers.get("x-content-type-options")).toBe("nosniff");
    expect(logo.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(Buffer.from(await logo.arrayBuffer()).equals(PNG_1PX)).toBe(true);
    const again = await fetch(server.url + logoUrl, { headers: { "if-none-match": logo.headers.get("etag")! } });
    expect(again.status).toBe(304);
  });

  it("a Pro owner's brand is white-label; DELETE removes it and its logo", async () => {
    https.serve("/pro.png", { status: 200, headers: { "content-type": "image/png" }, body: PNG_1PX });
    const owner = await ownerWithClient(server, holders, "pro");
    const res = await put(server, owner.cookie, owner.clientId, brand({ logoUri: logoAt("/pro.png") }));
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ shown: true, whiteLabel: true });
    const del = await server.api(brandingPath(owner.clientId), { method: "DELETE", cookie: owner.cookie });
    expect(del.status).toBe(204);
    expectProblem(await server.api(brandingPath(owner.clientId), { cookie: owner.cookie }), 404);
    expect((await fetch(server.url + res.json.logoUrl)).status).toBe(404);
  });

  it("without a logo or colour, only the name: both optional", async () => {
    const owner = await ownerWithClient(server, holders, "plus");
    const res = await put(server, owner.cookie, owner.clientId, { displayName: "Plain" });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ displayName: "Plain", logoUri: null, logoUrl: null, accentColor: null, supportUrl: null });
  });
});

describe("who may not", () => {
  it("someone else, even on a paid tier, is refused (403) for a client that exists, and anyone gets 404 for one that does not", async () => {
    const owner = await ownerWithClient(server, holders, "plus");
    expect((await put(server, owner.cookie, owner.clientId, brand())).status).toBe(200);
    const other = await signUp(server);
    holders.give(other.user.id, "pro");
    expectProblem(await put(server, other.cookie, owner.clientId, brand({ displayName: "Hijacked" })), 403);
    expectProblem(await server.api(brandingPath(owner.clientId), { cookie: other.cookie }), 403);
    expectProblem(await server.api(brandingPath(owner.clientId), { method: "DELETE", cookie: other.cookie }), 403);
    expectProblem(await put(server, other.cookie, "no-such-client", brand()), 404);
    // Nothing changed.
    expect((await server.api(brandingPath(owner.clientId), { cookie: owner.cookie })).json.displayName).toBe("Acme Books");
    // No session at all.
    expectProblem(await server.api(brandingPath(owner.clientId), { method: "PUT", body: brand() }), 401);
  });

  it("with two credentials at once, the guard and the change are the same person's: another's bearer beside the owner's cookie changes nothing", async () => {
    const owner = await ownerWithClient(server, holders, "plus");
    expect((await put(server, owner.cookie, owner.clientId, brand())).status).toBe(200);
    const other = await signUp(server);
    holders.give(other.user.id, "plus");
    // better-auth takes the bearer session over the cookie: that person is not the owner.
    const mixed = await server.api(brandingPath(owner.clientId), { method: "PUT", cookie: owner.cookie, headers: { authorization: `Bearer ${other.token}` }, body: brand({ displayName: "Mixed" }) });
    expectProblem(mixed, 403);
    expect((await server.api(brandingPath(owner.clientId), { cookie: owner.cookie })).json.displayName).toBe("Acme Books");
    // The other way round, the owner's bearer decides, and acts on the owner's client only.
    const ownerBearer = await server.api(brandingPath(owner.clientId), { method: "PUT", cookie: other.cookie, headers: { authorization: `Bearer ${owner.token}` }, body: brand({ displayName: "By Bearer" }) });
    expect(ownerBearer.status, ownerBearer.text).toBe(200);
    expect(ownerBearer.json.displayName).toBe("By Bearer");
  });

  it("a free owner gets 403 with a problem naming the tier required", async () => {
    const owner = await ownerWithClient(server, holders, "free");
    const res = await put(server, owner.cookie, owner.clientId, brand());
    expectProblem(res, 403);
    expect(res.json.code).toBe("BRANDING_TIER_REQUIRED");
    expect(res.json.detail).toMatch(/Plus tier/);
    expect(res.json.detail).toMatch(/your tier is Free/);
    expectProblem(await server.api(brandingPath(owner.clientId), { cookie: owner.cookie }), 404);
  });
});

describe("what is refused, with a problem that says why", () => {
  it("an accent colour below WCAG 2.2 AA contrast (4.5:1) against white: 422 with its ratio; one that is no colour: 400", async () => {
    const owner = await ownerWithClient(server, holders, "plus");
    const low = await put(server, owner.cookie, owner.clientId, brand({ accentColor: "#ffcc00" }));
    expectProblem(low, 422);
    expect(low.json.code).toBe("ACCENT_CONTRAST_TOO_LOW");
    expect(low.json.detail).toMatch(/#ffcc00 has a contrast ratio of 1\.\d+:1 against white/);
    expect(low.json.detail).toMatch(/4\.5:1/);
    expect(low.json.errors).toEqual([expect.objectContaining({ pointer: "/accentColor" })]);
    // Just below the line (#777777 is 4.47:1), and just above (#767676 is 4.54:1).
    expectProblem(await put(server, owner.cookie, owner.clientId, brand({ accentColor: "#777777" })), 422);
    expect((await put(server, owner.cookie, owner.clientId, brand({ accentColor: "#767676" }))).status).toBe(200);
    const notColour = await put(server, owner.cookie, owner.clientId, brand({ accentColor: "red" }));
    expectProblem(notColour, 400);
    expect(JSON.stringify(notColour.json.errors)).toContain("/accentColor");
  });

  it("bad input of other kinds: 400, never 500", async () => {
    const owner = await ownerWithClient(server, holders, "plus");
    for (const body of [{}, { displayName: "" }, { displayName: "x".repeat(65) }, { displayName: "Bad\u202Ename" }, brand({ supportUrl: "javascript:alert(1)" }), brand({ extra: 1 }), "not json"]) {
      const res = await put(server, owner.cookie, owner.clientId, body);
      expectProblem(res, 400);
    }
  });

  it("a logo over BRANDING_LOGO_MAX_BYTES, of the wrong type (SVG, or bytes that are no image), over http, or at a redirect", async () => {
    const owner = await ownerWithClient(server, holders, "plus");
    const big = Buffer.concat([PNG_1PX, Buffer.alloc(MAX)]);
    https.serve("/big.png", { status: 200, headers: { "content-type": "image/png" }, body: big });
    https.serve("/logo.svg", { status: 200, headers: { "content-type": "image/svg+xml" }, body: '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>' });
    https.serve("/text.png", { status: 200, headers: { "content-type": "image/png" }, body: "not an image" });
    https.serve("/liar.jpg", { status: 200, headers: { "content-type": "image/jpeg" }, body: PNG_1PX });
    https.serve("/moved.png", { status: 302, headers: { location: "/logo.png" } });
    const cases: [string, RegExp][] = [
      ["/big.png", new RegExp(`larger than ${MAX} bytes`)],
      ["/logo.svg", /SVG is not accepted/],
      ["/text.png", /must be a PNG, JPEG or WebP/],
      ["/liar.jpg", /Content-Type image\/jpeg for a image\/png image/],
      ["/moved.png", /HTTP 302/],
    ];
    for (const [path, why] of cases) {
      const res = await put(server, owner.cookie, owner.clientId, brand({ logoUri: logoAt(path) }));
      expectProblem(res, 422);
      expect(res.json.code).toBe("LOGO_REFUSED");
      expect(res.json.detail).toMatch(why);
    }
    const http = await put(server, owner.cookie, owner.clientId, brand({ logoUri: `http://localhost:${https.port}/logo.png` }));
    expectProblem(http, 400);
    expect(JSON.stringify(http.json.errors)).toContain("/logoUri");
    // None was stored.
    expectProblem(await server.api(brandingPath(owner.clientId), { cookie: owner.cookie }), 404);
  });
});

describe("the guarded fetcher's address rule (OUTBOUND_ALLOW_PRIVATE off, as in production)", () => {
  const strict = useTestServer(() => ({ OUTBOUND_EXTRA_CA_FILE: https.caFile }), { subscriptions: { ownership: holders.ownership } });

  it("refuses a logo on a loopback or private address before anything is sent", async () => {
    https.serve("/inside.png", { status: 200, headers: { "content-type": "image/png" }, body: PNG_1PX });
    const owner = await ownerWithClient(strict, holders, "plus");
    const before = https.requests.length;
    for (const uri of [logoAt("/inside.png"), "https://10.0.0.1/logo.png", "https://[::1]/logo.png"]) {
      const res = await put(strict, owner.cookie, owner.clientId, brand({ logoUri: uri }));
      expectProblem(res, 422);
      expect(res.json.detail).toMatch(/loopback|private/);
    }
    expect(https.requests.length).toBe(before);
  });
});

import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nonPublicReason } from "../../lib/ip-address.js";
import { createSafeFetch, OutboundRefused, resolveTarget } from "../../lib/safe-fetch.js";
import { agentKit, ed25519 } from "../helpers/agents.js";
import { useCountingListener, useTestServer } from "../helpers/fixtures.js";
import { signUp } from "../helpers/oauth.js";

/**
 * The guarded server-side fetcher (lib/safe-fetch.ts): which addresses it refuses, in every
 * spelling; that it sends nothing to a refused target, follows no redirect, stops at its size
 * and time limits; and that agent-auth's JWKS fetches go through it.
 */

describe("the address classifier", () => {
  it.each([
    ["127.0.0.1", /loopback/],
    ["127.0.0.2", /loopback/],
    ["10.1.2.3", /private/],
    ["172.31.255.255", /private/],
    ["192.168.0.1", /private/],
    ["169.254.169.254", /link-local/],
    ["100.64.0.1", /CGNAT/],
    ["100.127.255.254", /CGNAT/],
    ["0.0.0.0", /unspecified/],
    ["224.0.0.1", /multicast/],
    ["255.255.255.255", /broadcast/],
    ["::", /unspecified/],
    ["::1", /loopback/],
    ["fd00::1", /unique local/],
    ["fc00::1", /unique local/],
    ["fe80::1", /link-local/],
    ["ff02::1", /multicast/],
    ["2001:db8::1", /documentation/],
    ["3fff::1", /documentation/],
    ["fec0::1", /site-local/],
    ["100::1", /discard/],
    ["5f00::1", /segment routing/],
    ["4000::1", /not global unicast/],
    ["::1:2:3:4", /not global unicast/],
    ["localhost", /not an IP address/],
    ["127.1", /not an IP address/],
  ])("refuses %s", (ip, reason) => {
    expect(nonPublicReason(ip)).toMatch(reason);
  });

  // Every IPv6 form that carries an IPv4 address is judged by that address, in every spelling.
  it.each([
    // IPv4-mapped, ::ffff:0:0/96 (RFC 4291 §2.5.5.2)
    ["::ffff:127.0.0.2", /IPv4-mapped IPv6 of 127\.0\.0\.2: loopback/],
    ["::ffff:7f00:2", /IPv4-mapped IPv6 of 127\.0\.0\.2: loopback/],
    ["0:0:0:0:0:ffff:7f00:1", /IPv4-mapped IPv6 of 127\.0\.0\.1: loopback/],
    ["::ffff:a9fe:a9fe", /IPv4-mapped IPv6 of 169\.254\.169\.254: link-local/],
    ["[::ffff:10.0.0.1]", /IPv4-mapped IPv6 of 10\.0\.0\.1: private/],
    // IPv4-translated, ::ffff:0:0:0/96 (RFC 2765 SIIT): the form of the issue
    ["::ffff:0:7f00:1", /IPv4-translated IPv6 of 127\.0\.0\.1: loopback/],
    ["::ffff:0:127.0.0.1", /IPv4-translated IPv6 of 127\.0\.0\.1: loopback/],
    ["0::FFFF:0:A00:1", /IPv4-translated IPv6 of 10\.0\.0\.1: private/],
    ["::ffff:0:a9fe:a9fe", /IPv4-translated IPv6 of 169\.254\.169\.254: link-local/],
    ["::ffff:0:808:808", /IPv4-translated IPv6 \(RFC 2765, not globally routable\)/],
    // IPv4-compatible, ::/96 (deprecated)
    ["::127.0.0.1", /IPv4-compatible IPv6 of 127\.0\.0\.1: loopback/],
    ["::a00:1", /IPv4-compatible IPv6 of 10\.0\.0\.1: private/],
    ["::8.8.8.8", /IPv4-compatible IPv6 \(deprecated/],
    // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052) and local-use 64:ff9b:1::/48 (RFC 8215)
    ["64:ff9b::a9fe:a9fe", /NAT64 of 169\.254\.169\.254: link-local/],
    ["64:ff9b::127.0.0.1", /NAT64 of 127\.0\.0\.1: loopback/],
    ["64:ff9b:1::7f00:1", /local-use NAT64 of 127\.0\.0\.1: loopback/],
    ["64:ff9b:1::808:808", /local-use NAT64 \(RFC 8215/],
    // 6to4, 2002::/16 (RFC 3056)
    ["2002:7f00:1::", /6to4 of 127\.0\.0\.1: loopback/],
    ["2002:c0a8:101::1", /6to4 of 192\.168\.1\.1: private/],
    ["2002:a9fe:a9fe::1", /6to4 of 169\.254\.169\.254: link-local/],
    // Teredo, 2001::/32 (RFC 4380): the client address, inverted, in the last 32 bits
    ["2001:0:4136:e378:8000:63bf:80ff:fffe", /Teredo of 127\.0\.0\.1: loopback/],
    ["2001:0:4136:e378::1", /Teredo of 255\.255\.255\.254/],
    ["2001:0:4136:e378:8000:63bf:f7f7:f7f7", /Teredo \(RFC 4380/],
  ])("refuses %s, an IPv6 form of an IPv4 address", (ip, reason) => {
    expect(nonPublicReason(ip)).toMatch(reason);
  });

  it.each([
    "8.8.8.8",
    "1.1.1.1",
    "100.128.0.1",
    "172.32.0.1",
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
  ])("lets public %s through", (ip) => {
    expect(nonPublicReason(ip)).toBeNull();
  });

  it.each([
    "http://2130706433/",
    "http://0x7f.1/",
    "http://0x7f000001/",
    "http://017700000001/",
    "http://0177.0.0.1/",
    "http://127.1/",
    "http://0/",
    "http://[::ffff:127.0.0.2]/",
    "http://[::ffff:0:7f00:1]/",
    "https://[::ffff:0:127.0.0.1]/client.json",
    "http://[64:ff9b::7f00:1]/",
    "http://[2002:7f00:1::]/",
    "http://[::1]/",
    "https://localhost/",
    "https://LOCALHOST./",
  ])("refuses %s, however the loopback is spelled or named", async (url) => {
    await expect(resolveTarget(new URL(url), false)).rejects.toBeInstanceOf(OutboundRefused);
  });

  it("refuses other schemes and credentials in the URL", async () => {
    await expect(resolveTarget(new URL("file:///etc/passwd"), true)).rejects.toThrow(/scheme/);
    await expect(resolveTarget(new URL("http://user:pw@8.8.8.8/"), true)).rejects.toThrow(/credentials/);
  });
});

describe("the guarded fetcher over HTTP", () => {
  let target: Server;
  let base: string;
  const hits: string[] = [];
  beforeAll(async () => {
    target = createHttpServer((req, res) => {
      hits.push(req.url ?? "");
      if (req.url === "/redirect") return void res.writeHead(302, { location: "/secret" }).end();
      if (req.url === "/big") return void res.end("x".repeat(4096));
      if (req.url === "/slow") return; // never answers
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ host: req.headers.host, method: req.method }));
    });
    await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
    base = `http://localhost:${(target.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    target.closeAllConnections();
    await new Promise((resolve) => target.close(resolve));
  });

  it("sends nothing to a name that resolves to loopback", async () => {
    hits.length = 0;
    await expect(createSafeFetch({ allowPrivate: false })(`${base}/jwks`)).rejects.toThrow(/resolves to 127\.0\.0\.1: loopback/);
    expect(hits).toEqual([]);
  });

  it("reaches it with OUTBOUND_ALLOW_PRIVATE (development), by the name it was given", async () => {
    const res = await createSafeFetch({ allowPrivate: true })(`${base}/jwks`, { method: "POST", body: "{}" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ host: new URL(base).host, method: "POST" });
  });

  it("follows no redirect", async () => {
    hits.length = 0;
    const res = await createSafeFetch({ allowPrivate: true })(`${base}/redirect`);
    expect(res.status).toBe(302);
    expect(hits).toEqual(["/redirect"]);
  });

  it("stops at the size cap and at the deadline", async () => {
    await expect(createSafeFetch({ allowPrivate: true, maxBytes: 1024 })(`${base}/big`)).rejects.toThrow(/larger than 1024 bytes/);
    const started = Date.now();
    await expect(createSafeFetch({ allowPrivate: true, timeoutMs: 300 })(`${base}/slow`)).rejects.toThrow(/no answer within 300 ms/);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("gives a variant with its own limits and the same address rule (the one shared fetcher, collaborators.ts)", async () => {
    const guarded = createSafeFetch({ allowPrivate: false });
    hits.length = 0;
    await expect(guarded.withLimits({ maxBytes: 1024 })(`${base}/jwks`)).rejects.toThrow(/resolves to 127\.0\.0\.1: loopback/);
    expect(hits).toEqual([]);
    const open = createSafeFetch({ allowPrivate: true });
    await expect(open.withLimits({ maxBytes: 1024 })(`${base}/big`)).rejects.toThrow(/larger than 1024 bytes/);
    expect((await open(`${base}/big`)).status).toBe(200);
  });
});

describe("agent-auth's JWKS fetches", () => {
  const server = useTestServer();
  // Something listening on 127.0.0.2, a loopback address agent-auth's own blocklist misses.
  const listener = useCountingListener("127.0.0.2");
  const kit = agentKit(() => server);

  it("refuse a host jwks_url that points inside when it is set", async () => {
    const person = await signUp(server);
    const host = await kit.enrolledHost(person.cookie);
    for (const jwksUrl of ["https://127.0.0.2/jwks", "https://[::ffff:127.0.0.2]/jwks", "https://localhost/jwks", "https://0x7f.1/jwks", "https://100.64.0.1/jwks", "http://8.8.8.8/jwks"]) {
      const created = await server.api("/api/auth/host/create", { cookie: person.cookie, body: { name: "Remote keys", jwks_url: jwksUrl } });
      expect(created.status, jwksUrl).toBe(400);
      expect(created.json).toMatchObject({ error: "invalid_request", message: expect.stringMatching(/^jwks_url must/) });
      const updated = await server.api("/api/auth/host/update", { cookie: person.cookie, body: { host_id: host.hostId, jwks_url: jwksUrl } });
      expect(updated.status, jwksUrl).toBe(400);
    }
    const row = await server.db.selectFrom("agentHost").select("jwksUrl").where("id", "=", host.hostId).executeTakeFirstOrThrow();
    expect(row.jwksUrl).toBeNull();
    // A public literal is accepted (nothing is fetched until a JWT names a kid).
    expect((await server.api("/api/auth/host/update", { cookie: person.cookie, body: { host_id: host.hostId, jwks_url: "https://8.8.8.8/jwks" } })).status).toBe(200);
  });

  it("never contact an agent's jwks_url that points inside", async () => {
    const person = await signUp(server);
    const host = await kit.enrolledHost(person.cookie);
    const key = await ed25519();
    const jwksUrl = `https://127.0.0.2:${listener.port}/jwks`;
    const registered = await kit.bearer("/api/auth/agent/register", await kit.hostJwt(host.hostId, host.hostKey, { agent_public_key: key.jwk, agent_jwks_url: jwksUrl }), { name: "Inside", capabilities: ["profile.read"] });
    expect(registered.status).toBe(200);
    const agentId = registered.json.agent_id as string;
    expect((await server.api("/api/auth/agent/approve-capability", { cookie: person.cookie, body: { agent_id: agentId, user_code: registered.json.approval.user_code, action: "approve" } })).status).toBe(200);
    // An agent JWT with a kid makes agent-auth look the key up at the agent's jwks_url.
    const { SignJWT } = await import("jose");
    const jwt = await new SignJWT({}).setProtectedHeader({ alg: "EdDSA", typ: "agent+jwt", kid: "k1" }).setSubject(agentId).setIssuer(host.hostId).setAudience(kit.audience()).setIssuedAt().setExpirationTime("60s").setJti(crypto.randomUUID()).sign(key.privateKey);
    const res = await kit.bearer("/api/auth/capability/execute", jwt, { capability: "profile.read" });
    // Refused fetch = no keys: agent-auth falls back to the agent's stored key.
    expect(res.status).toBe(200);
    expect(listener.connections).toBe(0);
  });
});

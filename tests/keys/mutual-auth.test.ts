import { PrivateKey } from "@bsv/sdk";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadEnv } from "../../lib/env.js";
import { useTempDirs, useTestServer } from "../helpers/fixtures.js";
import { peerClient } from "../helpers/mutual-auth.js";
import { readResponse, uniqueClientIp } from "../helpers/server.js";

const SERVER_KEY = PrivateKey.fromRandom();
const server = useTestServer({ SERVER_IDENTITY_KEY: SERVER_KEY.toWif() });

/**
 * A recording relay in front of the server: AuthFetch talks to it (its fetch cannot be swapped),
 * it forwards each request unchanged and keeps what was sent, so a test can replay or alter a
 * genuinely signed request. The signature covers method, path, query, x-bsv-* headers,
 * content-type and body, none of which the relay touches.
 */
async function recordingRelay(target: string) {
  const sent: Array<{ method: string; path: string; headers: Record<string, string> }> = [];
  const relay = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && k !== "host" && k !== "connection" && k !== "content-length") headers[k] = v;
    sent.push({ method: req.method!, path: req.url!, headers });
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    const answer = await fetch(target + req.url, { method: req.method, headers, body });
    res.writeHead(answer.status, Object.fromEntries([...answer.headers].filter(([k]) => k !== "content-length" && k !== "content-encoding" && k !== "transfer-encoding")));
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
  const { port } = relay.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, sent, close: () => new Promise<void>((resolve) => relay.close(() => resolve())) };
}

/** The headers of a signed request to `path` that `peer` sent through a relay. */
async function signedRequestHeaders(peer: ReturnType<typeof peerClient>, path: string) {
  const relay = await recordingRelay(server.url);
  try {
    const res = await peer.client.fetch(relay.url + path, { method: "GET" });
    expect(res.status).toBe(200);
    const signed = relay.sent.find((s) => s.path === path)!;
    expect(signed.headers["x-bsv-auth-request-id"]).toBeTruthy();
    return signed.headers;
  } finally {
    await relay.close();
  }
}

describe("/.well-known/auth", () => {
  it("publishes the server's identity key from SERVER_IDENTITY_KEY (WIF) and where to shake hands", async () => {
    const res = await server.api("/.well-known/auth");
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ identityKey: SERVER_KEY.toPublicKey().toString(), authVersion: "0.1", handshakeEndpoint: `${server.url}/.well-known/auth` });
    expect(res.json.certificateIssuance).toMatchObject({ enabled: false });
    expect(JSON.stringify(res.json)).not.toContain(SERVER_KEY.toHex());
  });

  it("refuses a handshake that is not a BRC-103 message, as a problem", async () => {
    for (const body of ["not json", JSON.stringify({ version: "9.9", messageType: "initialRequest", identityKey: "02ab" }), JSON.stringify({ version: "0.1", messageType: "general" })]) {
      const res = await server.api("/.well-known/auth", { method: "POST", body, headers: { "content-type": "application/json" } });
      expect(res.status).toBe(401);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(res.json.code).toBe("MUTUAL_AUTH_FAILED");
    }
  });
});

describe("BRC-103 mutual authentication with AuthFetch", () => {
  it("shakes hands, then answers a signed request with a signed answer naming the peer's identity key", async () => {
    const peer = peerClient();
    const res = await peer.client.fetch(`${server.url}/api/certificates/issued`, { method: "GET" });
    expect(res.status).toBe(200);
    // AuthFetch verified our signature over the answer; the header is the key it verified against.
    expect(res.headers.get("x-bsv-auth-identity-key")).toBe(SERVER_KEY.toPublicKey().toString());
    expect(await res.json()).toEqual({ subject: peer.identityKey, certificates: [] });

    // A second request reuses the session, with a JSON body this time.
    const again = await peer.client.fetch(`${server.url}/api/certificates/revoke/${encodeURIComponent("AAAA")}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(again.status).toBe(404);
    expect((await again.json()).code).toBe("CERTIFICATE_NOT_FOUND");
  });

  it("keeps two peers apart: each is answered as itself", async () => {
    const [a, b] = [peerClient(), peerClient()];
    const [ra, rb] = await Promise.all([a, b].map((p) => p.client.fetch(`${server.url}/api/certificates/issued`, { method: "GET" })));
    expect((await ra!.json()).subject).toBe(a.identityKey);
    expect((await rb!.json()).subject).toBe(b.identityKey);
  });

  it("refuses an unsigned request to a protected route with 401", async () => {
    const res = await server.api("/api/certificates/issued");
    expect(res.status).toBe(401);
    expect(res.json.code).toBe("MUTUAL_AUTH_REQUIRED");
    expect(res.headers.get("x-bsv-auth-signature")).toBeNull();
  });

  it("refuses a replayed, an altered, and an impersonating copy of a signed request", async () => {
    const peer = peerClient();
    const path = "/api/certificates/issued?x=1";
    const headers = await signedRequestHeaders(peer, path);

    const replay = await readResponse(await fetch(server.url + path, { headers }));
    expect(replay.status).toBe(401);
    expect(replay.json.code).toBe("MUTUAL_AUTH_FAILED");

    // Same headers, another query: the signature no longer covers the request (a fresh request id, so not a replay).
    const altered = { ...headers, "x-bsv-auth-request-id": Buffer.alloc(32, 7).toString("base64") };
    expect((await fetch(server.url + path.replace("x=1", "x=2"), { headers: altered })).status).toBe(401);

    // Claiming another identity key within this session: refused, whoever signed.
    const other = PrivateKey.fromRandom().toPublicKey().toString();
    const impersonating = { ...headers, "x-bsv-auth-identity-key": other, "x-bsv-auth-request-id": Buffer.alloc(32, 9).toString("base64") };
    const res = await readResponse(await fetch(server.url + path, { headers: impersonating }));
    expect(res.status).toBe(401);
    expect(res.text).not.toContain(other);
  });

  it("refuses a request signed in a session it does not know", async () => {
    const headers = await signedRequestHeaders(peerClient(), "/api/certificates/issued");
    headers["x-bsv-auth-your-nonce"] = Buffer.alloc(48, 1).toString("base64");
    headers["x-bsv-auth-request-id"] = Buffer.alloc(32, 3).toString("base64");
    const res = await readResponse(await fetch(`${server.url}/api/certificates/issued`, { headers }));
    expect(res.status).toBe(401);
    expect(res.json.code).toBe("MUTUAL_AUTH_FAILED");
  });
});

describe("SERVER_IDENTITY_KEY", () => {
  const tempDir = useTempDirs("idp-identity-key-");

  it("is generated once into DATA_DIR when unset, with a warning, and kept across starts", () => {
    const dir = tempDir();
    const first = loadEnv({ DATA_DIR: dir });
    expect(first.serverIdentityKey).toMatch(/^[0-9a-f]{64}$/);
    expect(first.warnings.join("\n")).toContain("SERVER_IDENTITY_KEY is not set");
    expect(first.warnings.join("\n")).not.toContain(first.serverIdentityKey);
    expect(readFileSync(join(dir, "server-identity-key"), "utf8").trim()).toBe(first.serverIdentityKey);
    expect(loadEnv({ DATA_DIR: dir }).serverIdentityKey).toBe(first.serverIdentityKey);
  });

  it("takes 64 hex digits or WIF, and refuses anything else", () => {
    const key = PrivateKey.fromRandom();
    const hex = key.toHex().padStart(64, "0");
    expect(loadEnv({ DATA_DIR: tempDir(), SERVER_IDENTITY_KEY: hex }).serverIdentityKey).toBe(hex);
    expect(loadEnv({ DATA_DIR: tempDir(), SERVER_IDENTITY_KEY: key.toWif() }).serverIdentityKey).toBe(hex);
    expect(() => loadEnv({ DATA_DIR: tempDir(), SERVER_IDENTITY_KEY: "not-a-key" })).toThrow(/SERVER_IDENTITY_KEY/);
  });

  it("is required in production once certificate issuance is on", () => {
    const production = { NODE_ENV: "production", DATA_DIR: tempDir(), BETTER_AUTH_SECRET: "s".repeat(40), AUTH_URL: "https://id.example.com", MAIL_DISABLED: "true", CERTIFICATE_ISSUANCE_ENABLED: "true" };
    expect(() => loadEnv(production)).toThrow(/SERVER_IDENTITY_KEY/);
    expect(loadEnv({ ...production, SERVER_IDENTITY_KEY: "22".repeat(32), CERTIFICATE_FUNDING_KEY: "33".repeat(32) }).certificates.issuanceEnabled).toBe(true);
  });
});

describe("handshake rate limit", () => {
  const limited = useTestServer({ RATE_LIMIT_ENABLED: "true", TRUST_PROXY: "true" });

  it("answers 429 with Retry-After past 30 handshakes a minute from one address", async () => {
    const ip = uniqueClientIp();
    const post = () => limited.api("/.well-known/auth", { method: "POST", body: "{}", headers: { "content-type": "application/json", "x-forwarded-for": ip } });
    for (let i = 0; i < 30; i++) expect((await post()).status).toBe(401);
    const refused = await post();
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    // Another address is not held back.
    expect((await limited.api("/.well-known/auth", { method: "POST", body: "{}", headers: { "content-type": "application/json", "x-forwarded-for": uniqueClientIp() } })).status).toBe(401);
  });
});

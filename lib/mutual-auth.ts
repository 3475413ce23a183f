import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";
import { Peer, PrivateKey, ProtoWallet, SessionManager, Utils, verifyNonce, type AuthMessage, type PeerSession, type Transport, type WalletInterface } from "@bsv/sdk";
import type { Context, MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import type { Redis } from "ioredis";
import { problem } from "./errors.js";
import { parseJsonOrNull } from "./json.js";
import { PROBLEM_CODES } from "./problem-codes.js";

/**
 * BRC-103 mutual authentication over HTTP (BRC-104), as @bsv/sdk's `AuthFetch` speaks it:
 *
 * - handshake messages (initialRequest, certificate messages) are POSTed as JSON to
 *   `/.well-known/auth`; @bsv/sdk's `Peer` answers them through `HandshakeTransport`, and the
 *   answer goes back in the HTTP response with the `x-bsv-auth-*` headers;
 * - every later request is a "general message": the HTTP request itself, signed by the peer over
 *   a serialization of its method, path, query, a few headers and body, named by
 *   `x-bsv-auth-request-id` and bound to the session by `x-bsv-auth-your-nonce`. `requirePeer`
 *   verifies it, runs the route, and signs the route's answer the same way.
 *
 * The behaviour follows @bsv/auth-express-middleware (Express only), with two differences, both
 * on the side of failing closed: the peer's identity is the session's (the key the handshake
 * signed for), never the `x-bsv-auth-identity-key` header's claim; and the response is signed in
 * the session the request came in, not in whichever session of that identity was used last.
 */

/** BRC-104's version string (`x-bsv-auth-version`). */
export const AUTH_VERSION = "0.1";
const SIGNATURE_PROTOCOL: [2, string] = [2, "auth message signature"];

export interface MutualAuth {
  /** The server's identity public key (compressed, hex). */
  identityKey: string;
  /** The server's wallet: signs handshakes and answers, decrypts certificate fields (BRC-52). */
  wallet: ProtoWallet;
  /** POST /.well-known/auth. */
  handshake: (c: Context) => Promise<Response>;
  /** Routes only a mutually authenticated peer may call: `c.var.peer` is who it is. */
  requirePeer: MiddlewareHandler<MutualAuthEnv>;
}

export interface MutualAuthEnv {
  Variables: { peer: { identityKey: string } };
}

/**
 * Gives @bsv/sdk's Peer a way to answer: whatever the Peer sends while one HTTP request's message
 * is processed becomes that request's answer (AsyncLocalStorage keeps concurrent requests apart).
 */
class HandshakeTransport implements Transport {
  private receive?: (message: AuthMessage) => Promise<void>;
  private readonly replies = new AsyncLocalStorage<{ reply?: AuthMessage }>();

  async send(message: AuthMessage): Promise<void> {
    const pending = this.replies.getStore();
    // General messages never go through the Peer here (requirePeer signs answers itself).
    if (!pending || message.messageType === "general") throw new Error("no HTTP request to answer");
    pending.reply = message;
  }

  async onData(callback: (message: AuthMessage) => Promise<void>): Promise<void> {
    this.receive = callback;
  }

  /** The Peer's answer to one incoming message, if it gave one (it drops messages it refuses). */
  async deliver(message: AuthMessage): Promise<AuthMessage | undefined> {
    const pending: { reply?: AuthMessage } = {};
    await this.replies.run(pending, () => this.receive!(message));
    return pending.reply;
  }
}

/**
 * Where authenticated peer sessions and the signed requests already accepted are kept beyond
 * the handshake: this process's memory (`memoryPeerSessions`), or Redis (`redisPeerSessions`),
 * so a peer that shook hands with one instance is served by every instance, and a signed
 * request accepted by one is a replay on the others.
 */
export interface PeerSessionStore {
  /** Keeps a session the handshake just authenticated. */
  save(session: PeerSession): Promise<void>;
  /** The authenticated session under our nonce, if it is still kept. */
  load(sessionNonce: string): Promise<PeerSession | undefined>;
  /** True the first time `request` (nonce and request id) is seen in `session` (as loaded), false after. */
  claim(session: PeerSession, request: string): Promise<boolean>;
}

export function createMutualAuth(privateKeyHex: string, options: { sessions?: SessionManager; store?: PeerSessionStore } = {}): MutualAuth {
  const sessions = options.sessions ?? new SessionManager();
  const store = options.store ?? memoryPeerSessions(sessions);
  const wallet = new ProtoWallet(PrivateKey.fromHex(privateKeyHex));
  const identityKey = PrivateKey.fromHex(privateKeyHex).toPublicKey().toString();
  const transport = new HandshakeTransport();
  new Peer(asWalletInterface(wallet), transport, undefined, sessions);

  const made = madeSessions(sessions);
  async function handshake(c: Context): Promise<Response> {
    const message = await readHandshakeMessage(c);
    // A certificate message may follow a handshake made with another instance: bring its session here.
    if (typeof message.yourNonce === "string" && !sessions.getSession(message.yourNonce)) {
      const known = await store.load(message.yourNonce);
      if (known) {
        sessions.addSession(known);
        made.add(message.yourNonce);
      }
    }
    const reply = await transport.deliver(message);
    if (reply?.messageType === "initialResponse" && reply.initialNonce) {
      made.add(reply.initialNonce);
      const session = sessions.getSession(reply.initialNonce);
      // Not kept, not usable: a handshake whose session could not be stored fails (503), never half-made.
      const stored = session ? await store.save(session).then(() => true, () => false) : false;
      if (!stored) throw problem(PROBLEM_CODES.NOT_READY, { detail: "The peer session could not be kept just now; shake hands again shortly." });
    }
    if (!reply) {
      // A certificate message needs no answer of its own; anything else the Peer dropped was refused.
      if (message.messageType === "certificateResponse") return new Response(null, { status: 204 });
      throw problem(PROBLEM_CODES.MUTUAL_AUTH_FAILED, { detail: "The handshake message was refused (version, nonce or signature)." });
    }
    return new Response(JSON.stringify(reply), { headers: { "content-type": "application/json", "cache-control": "no-store", ...authHeaders(reply) } });
  }

  const requirePeer = createMiddleware<MutualAuthEnv>(async (c, next) => {
    const request = await readGeneralMessage(c);
    const session = await verifyGeneralMessage(wallet, store, request);
    // BRC-103 leaves replays to the transport: a signed request is accepted once.
    if (!(await store.claim(session, `${request.nonce} ${request.requestId}`))) throw problem(PROBLEM_CODES.MUTUAL_AUTH_FAILED, { detail: "This signed request was already used." });
    c.set("peer", { identityKey: session.peerIdentityKey! });
    await next();
    const signed = await signAnswer(wallet, identityKey, session, request.requestId, c.res);
    c.res = undefined; // else Hono copies the unsigned answer's headers onto the signed one
    c.res = signed;
  });

  return { identityKey, wallet, handshake, requirePeer };
}

/**
 * The Peer and the nonce helpers are typed for a full BRC-100 wallet but call only the key
 * operations a ProtoWallet has (signatures, HMACs, public keys). A peer asking us for our own
 * certificates would reach listCertificates, which fails, and its handshake is refused.
 */
export function asWalletInterface(wallet: ProtoWallet): WalletInterface {
  return wallet as unknown as WalletInterface;
}

/**
 * SessionManager keeps every session for ever, and anyone may shake hands: past MAX_SESSIONS the
 * oldest sessions are forgotten (their peers shake hands again).
 */
const MAX_SESSIONS = 20_000;
function madeSessions(sessions: SessionManager) {
  const order: string[] = [];
  return {
    add(sessionNonce: string) {
      order.push(sessionNonce);
      while (order.length > MAX_SESSIONS) {
        const old = sessions.getSession(order.shift()!);
        if (old) sessions.removeSession(old);
      }
    },
  };
}

/**
 * Sessions in this process's SessionManager (the Peer's own), and the signed requests already
 * accepted here: the most recent MAX_SEEN, oldest forgotten first. One instance only.
 */
const MAX_SEEN = 100_000;
export function memoryPeerSessions(sessions: SessionManager): PeerSessionStore {
  const seen = new Set<string>();
  return {
    async save() {
      // The Peer already keeps it in `sessions`.
    },
    async load(sessionNonce) {
      return sessions.getSession(sessionNonce);
    },
    async claim(session, request) {
      const key = `${session.sessionNonce} ${request}`;
      if (seen.has(key)) return false;
      seen.add(key);
      if (seen.size > MAX_SEEN) seen.delete(seen.values().next().value!);
      return true;
    },
  };
}

/** How long a peer session kept in Redis lasts from its handshake; the peer then shakes hands again. */
export const PEER_SESSION_TTL_MS = 24 * 60 * 60 * 1000;
const SESSION_PREFIX = "idp:mutual-auth:session:";
const SEEN_PREFIX = "idp:mutual-auth:seen:";

/**
 * Sessions and accepted requests in Redis, shared by every instance. A session lasts
 * PEER_SESSION_TTL_MS from its handshake (never extended), and each accepted request's record
 * expires with its session, after which the request cannot be accepted anyway (no session).
 * Redis unreachable: requests fail (401), never accepted unchecked.
 */
export function redisPeerSessions(redis: Redis, ttlMs = PEER_SESSION_TTL_MS): PeerSessionStore {
  return {
    async save(session) {
      const expiresAt = Date.now() + ttlMs;
      await redis.set(SESSION_PREFIX + session.sessionNonce, JSON.stringify({ ...session, expiresAt }), "PX", ttlMs);
    },
    async load(sessionNonce) {
      if (sessionNonce.length > 200) return undefined;
      const text = await redis.get(SESSION_PREFIX + sessionNonce).catch(() => null);
      const stored = text ? (parseJsonOrNull(text) as (PeerSession & { expiresAt?: number }) | null) : null;
      if (!stored || stored.sessionNonce !== sessionNonce || typeof stored.expiresAt !== "number") return undefined;
      return stored;
    },
    async claim(session, request) {
      const { expiresAt } = session as { expiresAt?: unknown };
      if (typeof expiresAt !== "number") return false;
      const ttl = Math.max(1, expiresAt - Date.now()) + 1000;
      const created = await redis.set(`${SEEN_PREFIX}${session.sessionNonce} ${request}`, "1", "PX", ttl, "NX").catch(() => null);
      return created === "OK";
    },
  };
}

async function readHandshakeMessage(c: Context): Promise<AuthMessage> {
  let message: unknown;
  try {
    message = JSON.parse(await c.req.text());
  } catch {
    throw problem(PROBLEM_CODES.MUTUAL_AUTH_FAILED, { detail: "The handshake message is not JSON." });
  }
  const m = message as Partial<AuthMessage> | null;
  if (!m || typeof m !== "object" || m.version !== AUTH_VERSION || typeof m.identityKey !== "string" || !["initialRequest", "certificateRequest", "certificateResponse"].includes(String(m.messageType))) {
    throw problem(PROBLEM_CODES.MUTUAL_AUTH_FAILED, { detail: `Send a BRC-103 handshake message of version ${AUTH_VERSION}.` });
  }
  return m as AuthMessage;
}

/** The x-bsv-auth-* headers that carry a message's envelope. */
function authHeaders(message: AuthMessage, requestId?: string): Record<string, string> {
  const headers: Record<string, string> = {
    "x-bsv-auth-version": message.version,
    "x-bsv-auth-message-type": message.messageType,
    "x-bsv-auth-identity-key": message.identityKey,
    "x-bsv-auth-nonce": message.nonce ?? message.initialNonce ?? "",
    "x-bsv-auth-your-nonce": message.yourNonce ?? "",
    "x-bsv-auth-signature": Utils.toHex(message.signature ?? []),
  };
  if (requestId) headers["x-bsv-auth-request-id"] = requestId;
  if (message.requestedCertificates) headers["x-bsv-auth-requested-certificates"] = JSON.stringify(message.requestedCertificates);
  return headers;
}

interface GeneralRequest {
  requestId: string;
  identityKey: string;
  nonce: string;
  yourNonce: string;
  signature: number[];
  payload: number[];
}

/** A header is signed when it is x-bsv-* (but not x-bsv-auth-*), authorization, or (requests) content-type. */
function signedHeaders(headers: Headers, withContentType: boolean): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  headers.forEach((value, key) => {
    const k = key.toLowerCase();
    if (k.startsWith("x-bsv-auth")) return;
    if (k.startsWith("x-bsv-") || k === "authorization") out.push([k, value]);
    else if (withContentType && k === "content-type") out.push([k, value.split(";")[0]!.trim()]);
  });
  return out.sort(([a], [b]) => a.localeCompare(b));
}

function writeHeaders(writer: Utils.Writer, headers: Array<[string, string]>) {
  writer.writeVarIntNum(headers.length);
  for (const [key, value] of headers) {
    for (const text of [key, value]) {
      const bytes = Utils.toArray(text, "utf8");
      writer.writeVarIntNum(bytes.length);
      writer.write(bytes);
    }
  }
}

/** BRC-104 request payload, byte for byte as AuthFetch's serializeRequest writes it. */
async function readGeneralMessage(c: Context): Promise<GeneralRequest> {
  const h = (name: string) => c.req.header(name) ?? "";
  const [version, identityKey, nonce, yourNonce, signature, requestId] = ["version", "identity-key", "nonce", "your-nonce", "signature", "request-id"].map((n) => h(`x-bsv-auth-${n}`));
  if (!identityKey || !nonce || !yourNonce || !signature || !requestId) throw problem(PROBLEM_CODES.MUTUAL_AUTH_REQUIRED);
  if (version !== AUTH_VERSION || !/^[0-9a-fA-F]+$/.test(signature)) throw problem(PROBLEM_CODES.MUTUAL_AUTH_FAILED, { detail: `Unsupported x-bsv-auth-version or a malformed signature (version ${AUTH_VERSION}).` });
  const requestIdBytes = Utils.toArray(requestId, "base64");
  if (requestIdBytes.length !== 32) throw problem(PROBLEM_CODES.MUTUAL_AUTH_FAILED, { detail: "x-bsv-auth-request-id must be 32 bytes in Base64." });
  const url = new URL(c.req.url);
  const writer = new Utils.Writer();
  writer.write(requestIdBytes);
  const method = Utils.toArray(c.req.method, "utf8");
  writer.writeVarIntNum(method.length);
  writer.write(method);
  for (const part of [url.pathname, url.search]) {
    const bytes = Utils.toArray(part, "utf8");
    writer.writeVarIntNum(bytes.length > 0 ? bytes.length : -1);
    if (bytes.length > 0) writer.write(bytes);
  }
  writeHeaders(writer, signedHeaders(c.req.raw.headers, true));
  const body = new Uint8Array(await c.req.arrayBuffer());
  writer.writeVarIntNum(body.length > 0 ? body.length : -1);
  if (body.length > 0) writer.write(Array.from(body));
  return { requestId, identityKey, nonce, yourNonce, signature: Utils.toArray(signature, "hex"), payload: writer.toArray() };
}

/** BRC-103 §general messages: our nonce, a live session under it, the session's key signed this payload. */
async function verifyGeneralMessage(wallet: ProtoWallet, store: PeerSessionStore, request: GeneralRequest): Promise<PeerSession> {
  const refused = () => problem(PROBLEM_CODES.MUTUAL_AUTH_FAILED);
  if (!(await verifyNonce(request.yourNonce, asWalletInterface(wallet)).catch(() => false))) throw refused();
  const session = await store.load(request.yourNonce);
  // SessionManager.getSession also looks identity keys up: insist on the session the nonce names.
  if (!session || session.sessionNonce !== request.yourNonce || !session.isAuthenticated || !session.peerIdentityKey) throw refused();
  if (session.peerIdentityKey !== request.identityKey) throw refused();
  const { valid } = await wallet
    .verifySignature({ data: request.payload, signature: request.signature, protocolID: SIGNATURE_PROTOCOL, keyID: `${request.nonce} ${session.sessionNonce}`, counterparty: session.peerIdentityKey })
    .catch(() => ({ valid: false }));
  if (!valid) throw refused();
  session.lastUpdate = Date.now();
  return session;
}

/** The route's answer, signed for the peer over status, x-bsv-* headers and body (what AuthFetch checks). */
async function signAnswer(wallet: ProtoWallet, identityKey: string, session: PeerSession, requestId: string, res: Response): Promise<Response> {
  const body = new Uint8Array(await res.arrayBuffer());
  const writer = new Utils.Writer();
  writer.write(Utils.toArray(requestId, "base64"));
  writer.writeVarIntNum(res.status);
  writeHeaders(writer, signedHeaders(res.headers, false));
  writer.writeVarIntNum(body.length);
  if (body.length > 0) writer.write(Array.from(body));
  const payload = writer.toArray();
  const nonce = randomBytes(32).toString("base64");
  const { signature } = await wallet.createSignature({ data: payload, protocolID: SIGNATURE_PROTOCOL, keyID: `${nonce} ${session.peerNonce ?? ""}`, counterparty: session.peerIdentityKey! });
  const message: AuthMessage = { version: AUTH_VERSION, messageType: "general", identityKey, nonce, yourNonce: session.peerNonce, payload, signature };
  const headers = new Headers(res.headers);
  for (const [name, value] of Object.entries(authHeaders(message, requestId))) headers.set(name, value);
  headers.delete("x-bsv-auth-message-type");
  headers.delete("content-length");
  return new Response(body.length > 0 ? body : null, { status: res.status, headers });
}

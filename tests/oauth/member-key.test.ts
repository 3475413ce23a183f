import { PrivateKey } from "@bsv/sdk";
import { getAuthToken } from "bitcoin-auth";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { authorize, pkce, REDIRECT, registerClient, signUp } from "../helpers/oauth.js";

const TOKEN_PATH = "/api/auth/oauth2/token";
const server = useTestServer();
let person: Awaited<ReturnType<typeof signUp>>;
const member = PrivateKey.fromRandom();
const attacker = PrivateKey.fromRandom();
let clientId: string;

beforeAll(async () => {
  person = await signUp(server);
  const client = await registerClient(server, { member_pubkey: member.toPublicKey().toString() });
  clientId = client.client_id;
});

async function post(body: string, authToken?: string, opts: { query?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", ...opts.headers };
  if (authToken) headers["x-auth-token"] = authToken;
  const res = await fetch(server.url + TOKEN_PATH + (opts.query ?? ""), { method: "POST", headers, body });
  return { status: res.status, json: (await res.json()) as Record<string, any>, headers: res.headers };
}

function sign(key: PrivateKey, body: string, opts: { path?: string; timestamp?: string; scheme?: "brc77" | "bsm" } = {}) {
  return getAuthToken({ privateKeyWif: key.toWif(), requestPath: opts.path ?? TOKEN_PATH, body, scheme: opts.scheme, timestamp: opts.timestamp });
}

async function codeExchangeBody() {
  const { verifier, challenge } = pkce();
  const { code } = await authorize(server, { clientId, cookie: person.cookie, challenge });
  return new URLSearchParams({ grant_type: "authorization_code", code: code!, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier }).toString();
}

describe("clients registered with a member key", () => {
  it("echoes member_pubkey and owner_bap_id on registration and stores them", async () => {
    const pub = member.toPublicKey().toString();
    const res = await server.api("/api/auth/oauth2/register", {
      body: { client_name: "Keyed", application_type: "native", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", member_pubkey: pub, owner_bap_id: "1KXJ7DXDhrbXPpkW3EyMgMeEB4XEVbDMrV" },
    });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ member_pubkey: pub, owner_bap_id: "1KXJ7DXDhrbXPpkW3EyMgMeEB4XEVbDMrV" });
    const row = await server.db.selectFrom("oauthClient").select(["memberPubkey", "ownerBapId", "public", "type"]).where("clientId", "=", res.json.client_id).executeTakeFirst();
    expect(row).toMatchObject({ memberPubkey: pub, ownerBapId: "1KXJ7DXDhrbXPpkW3EyMgMeEB4XEVbDMrV", type: "native" });
    expect(Boolean(row!.public)).toBe(true);
  });

  it("refuses registration with a member_pubkey that is not a compressed secp256k1 key", async () => {
    for (const bad of ["02" + "zz".repeat(32), "04" + "11".repeat(64), member.toWif(), 42, "02" + "00".repeat(32)]) {
      const res = await server.api("/api/auth/oauth2/register", { body: { client_name: "Bad", application_type: "native", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", member_pubkey: bad } });
      expect(res.status, String(bad)).toBe(400);
      expect(res.json.error).toBe("invalid_client_metadata");
    }
  });

  it("exchanges a code with a valid X-Auth-Token, then refreshes with another", async () => {
    const body = await codeExchangeBody();
    const res = await post(body, sign(member, body));
    expect(res.status).toBe(200);
    expect(typeof res.json.access_token).toBe("string");
    const refreshBody = new URLSearchParams({ grant_type: "refresh_token", refresh_token: res.json.refresh_token, client_id: clientId }).toString();
    const refreshed = await post(refreshBody, sign(member, refreshBody));
    expect(refreshed.status).toBe(200);
    expect(refreshed.json.refresh_token).not.toBe(res.json.refresh_token);
  });

  it("accepts the BSM scheme too", async () => {
    const body = await codeExchangeBody();
    expect((await post(body, sign(member, body, { scheme: "bsm" }))).status).toBe(200);
  });

  it("refuses a missing, forged, stale, future, replayed or misdirected token, and keeps the code usable", async () => {
    const body = await codeExchangeBody();
    const victim = member.toPublicKey().toString();
    const forgedParts = sign(attacker, body).split("|");
    forgedParts[0] = victim; // names the victim's key, signed by the attacker
    const minutes = (m: number) => new Date(Date.now() + m * 60_000).toISOString();
    const otherBody = body.replace("grant_type=authorization_code", "grant_type=authorization_code&scope=openid");
    const cases: Record<string, string | undefined> = {
      missing: undefined,
      garbage: "not-a-token",
      "forged brc77 (victim pubkey, attacker signature)": forgedParts.join("|"),
      "attacker's own key": sign(attacker, body),
      "stale (6 minutes old)": sign(member, body, { timestamp: minutes(-6) }),
      "future (6 minutes ahead)": sign(member, body, { timestamp: minutes(6) }),
      "not a date": sign(member, body, { timestamp: "yesterday" }),
      "another path": sign(member, body, { path: "/api/auth/oauth2/introspect" }),
      "another body": sign(member, otherBody),
      "no body bound": sign(member, ""),
    };
    for (const [name, authToken] of Object.entries(cases)) {
      const res = await post(body, authToken);
      expect(res.status, name).toBe(401);
      expect(res.json.error, name).toBe("invalid_client");
      expect(res.json.access_token, name).toBeUndefined();
      expect(res.headers.get("cache-control"), name).toBe("no-store");
    }
    // The refusals happened before the code was looked at: it still works once.
    const good = sign(member, body);
    expect((await post(body, good)).status).toBe(200);
    // ...and that exact token can never be used again.
    const replay = await post(body, good);
    expect(replay.status).toBe(401);
    expect(replay.json.error).toBe("invalid_client");
  });

  it("accepts a token signed a little in the past or future (clock skew under 5 minutes)", async () => {
    const body = await codeExchangeBody();
    expect((await post(body, sign(member, body, { timestamp: new Date(Date.now() - 4 * 60_000).toISOString() }))).status).toBe(200);
    const body2 = await codeExchangeBody();
    expect((await post(body2, sign(member, body2, { timestamp: new Date(Date.now() + 4 * 60_000).toISOString() }))).status).toBe(200);
  });

  /** A code exchange and a refresh for the member-key client; each request is shaped by `shape`, unsigned. */
  async function unsignedAttempts(shape: (form: [string, string][]) => { body: string; query?: string; headers?: Record<string, string> }) {
    const { verifier, challenge } = pkce();
    const { code } = await authorize(server, { clientId, cookie: person.cookie, challenge });
    const exchange = shape([["grant_type", "authorization_code"], ["code", code!], ["redirect_uri", REDIRECT], ["code_verifier", verifier]]);
    const codeRes = await post(exchange.body, undefined, exchange);
    // A refresh token got the signed way, then offered without a signature.
    const body = await codeExchangeBody();
    const issued = await post(body, sign(member, body));
    expect(issued.status).toBe(200);
    const refresh = shape([["grant_type", "refresh_token"], ["refresh_token", issued.json.refresh_token]]);
    const refreshRes = await post(refresh.body, undefined, refresh);
    return { codeRes, refreshRes };
  }
  const form = (pairs: [string, string][]) => new URLSearchParams(pairs).toString();
  const basic = (id: string, secret = "x") => "Basic " + Buffer.from(`${encodeURIComponent(id)}:${secret}`).toString("base64");

  it("refuses an unsigned code exchange or refresh whose token URL carries a query string", async () => {
    const { codeRes, refreshRes } = await unsignedAttempts((pairs) => ({ body: form([...pairs, ["client_id", clientId]]), query: "?x=1" }));
    for (const res of [codeRes, refreshRes]) {
      expect(res.status).toBe(401);
      expect(res.json).toMatchObject({ error: "invalid_client" });
      expect(res.json.access_token).toBeUndefined();
    }
  });

  it("refuses a form that names the client twice, the first time empty (400, repeated parameter)", async () => {
    const { codeRes, refreshRes } = await unsignedAttempts((pairs) => ({ body: form([["client_id", ""], ...pairs, ["client_id", clientId]]) }));
    for (const res of [codeRes, refreshRes]) {
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ error: "invalid_request" });
      expect(res.json.access_token).toBeUndefined();
    }
  });

  it("refuses any repeated parameter on the token endpoint (resource aside)", async () => {
    const body = await codeExchangeBody();
    const twice = `${body}&code_verifier=x`;
    const res = await post(twice, sign(member, twice));
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ error: "invalid_request", error_description: "code_verifier must not be repeated" });
    // The refusal came first: the code still works with a proper request.
    expect((await post(body, sign(member, body))).status).toBe(200);
  });

  it("refuses a member-key client named by Basic or by the form when the two disagree, without a signature", async () => {
    const other = await registerClient(server, { token_endpoint_auth_method: "client_secret_basic" });
    const shapes = [
      // Basic names the member-key client, the form another one.
      (pairs: [string, string][]) => ({ body: form([...pairs, ["client_id", other.client_id]]), headers: { authorization: basic(clientId) } }),
      // Basic names another (real, confidential) client, the form the member-key client.
      (pairs: [string, string][]) => ({ body: form([...pairs, ["client_id", clientId]]), headers: { authorization: basic(other.client_id, other.client_secret!) } }),
      // Basic alone names the member-key client.
      (pairs: [string, string][]) => ({ body: form(pairs), headers: { authorization: basic(clientId) } }),
    ];
    for (const [i, shape] of shapes.entries()) {
      const { codeRes, refreshRes } = await unsignedAttempts(shape);
      for (const res of [codeRes, refreshRes]) {
        expect(res.status, `shape ${i}`).toBe(401);
        expect(res.json.error, `shape ${i}`).toBe("invalid_client");
        expect(res.json.access_token, `shape ${i}`).toBeUndefined();
      }
    }
  });

  it("still exchanges and refreshes with a valid signature when the token URL carries a query string", async () => {
    const body = await codeExchangeBody();
    const res = await post(body, sign(member, body), { query: "?x=1" });
    expect(res.status).toBe(200);
    const refreshBody = new URLSearchParams({ grant_type: "refresh_token", refresh_token: res.json.refresh_token, client_id: clientId }).toString();
    expect((await post(refreshBody, sign(member, refreshBody), { query: "?x=1" })).status).toBe(200);
  });

  it("does not ask clients without a member key for X-Auth-Token", async () => {
    const plain = await registerClient(server);
    const { verifier, challenge } = pkce();
    const { code } = await authorize(server, { clientId: plain.client_id, cookie: person.cookie, challenge });
    const body = new URLSearchParams({ grant_type: "authorization_code", code: code!, redirect_uri: REDIRECT, client_id: plain.client_id, code_verifier: verifier }).toString();
    expect((await post(body)).status).toBe(200);
  });
});

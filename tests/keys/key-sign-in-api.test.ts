import type { PrivateKey } from "@bsv/sdk";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { newIdentity as identity, signRequest } from "../helpers/bap.js";
import { useTestServer } from "../helpers/fixtures.js";
import { authorize, pkce, REDIRECT, registerClient, token } from "../helpers/oauth.js";
import { cookiesOf } from "../helpers/server.js";

const SIGN_IN = "/api/auth/sign-in/sigma";
const SIGN_UP = "/api/auth/sign-up/sigma";
const server = useTestServer();

const sign = (key: PrivateKey, path: string, body: string | undefined, timestamp?: string) => signRequest(key, path, body, { timestamp });

async function enrol(id: ReturnType<typeof identity>) {
  const body = JSON.stringify({ bapId: id.bapId, intent: "sign-up" });
  return server.api(SIGN_UP, { body, headers: { "x-auth-token": sign(id.key, SIGN_UP, body), "x-sigma-enrollment-proof": sign(id.key, SIGN_UP, body) } });
}
async function signIn(body: string, authToken: string | undefined) {
  return server.api(SIGN_IN, { body, headers: authToken ? { "x-auth-token": authToken } : {} });
}
async function userCount() {
  const row = await server.db.selectFrom("user").select((eb) => eb.fn.countAll().as("n")).executeTakeFirst();
  return Number(row?.n ?? 0);
}

describe("key sign-up", () => {
  it("enrols a new identity with two proofs from its member key and signs in", async () => {
    const id = identity();
    const res = await enrol(id);
    expect(res.status).toBe(200);
    expect(res.json.user).toMatchObject({ pubkey: id.pubkey, name: id.bapId });
    const cookie = cookiesOf(res.headers);
    expect(cookie).toMatch(/session_token=/);
    const session = await server.api("/api/auth/get-session", { cookie });
    expect(session.json.user.pubkey).toBe(id.pubkey);
    expect(session.json.user.emailVerified).toBe(false);
    const record = await server.db.selectFrom("bapIdentity").selectAll().where("bapId", "=", id.bapId).executeTakeFirstOrThrow();
    expect(record).toMatchObject({ memberPubkey: id.pubkey, userId: res.json.user.id });
  });

  it("refuses enrolment without the proof, with a proof from another key, or for a bapId the key does not derive", async () => {
    const id = identity();
    const other = identity();
    const body = JSON.stringify({ bapId: id.bapId, intent: "sign-up" });
    const before = await userCount();
    const cases: Record<string, Record<string, string>> = {
      "no proof": { "x-auth-token": sign(id.key, SIGN_UP, body) },
      "proof by another key": { "x-auth-token": sign(id.key, SIGN_UP, body), "x-sigma-enrollment-proof": sign(other.key, SIGN_UP, body) },
      "both by a key that is not the member key": { "x-auth-token": sign(other.key, SIGN_UP, body), "x-sigma-enrollment-proof": sign(other.key, SIGN_UP, body) },
    };
    for (const [name, headers] of Object.entries(cases)) {
      const res = await server.api(SIGN_UP, { body, headers });
      expect(res.status, name).toBe(401);
    }
    expect(await userCount()).toBe(before);
  });

  it("refuses to enrol an identity twice", async () => {
    const id = identity();
    expect((await enrol(id)).status).toBe(200);
    const again = await enrol(id);
    expect(again.status).toBe(409);
    expect(again.json.code).toBe("IDENTITY_ALREADY_REGISTERED");
  });
});

describe("key sign-in", () => {
  let id: ReturnType<typeof identity>;
  beforeAll(async () => {
    id = identity();
    expect((await enrol(id)).status).toBe(200);
  });

  it("signs in with the compact {bapId} body signed by the member key", async () => {
    const body = JSON.stringify({ bapId: id.bapId });
    const res = await signIn(body, sign(id.key, SIGN_IN, body));
    expect(res.status).toBe(200);
    expect(typeof res.json.token).toBe("string");
    expect(res.json.user).toMatchObject({ pubkey: id.pubkey, name: id.bapId });
    const session = await server.api("/api/auth/get-session", { cookie: cookiesOf(res.headers) });
    expect(session.json.user.id).toBe(res.json.user.id);
  });

  it("signs in with an empty {} body signed as no body (primary profile)", async () => {
    const res = await signIn("{}", sign(id.key, SIGN_IN, undefined));
    expect(res.status).toBe(200);
    expect(res.json.user.pubkey).toBe(id.pubkey);
  });

  it("answers 403 RESTORE_PROFILE_NOT_FOUND for an unknown key and creates nothing", async () => {
    const stranger = identity();
    const before = await userCount();
    const body = JSON.stringify({ bapId: stranger.bapId });
    const res = await signIn(body, sign(stranger.key, SIGN_IN, body));
    expect(res.status).toBe(403);
    expect(res.json.code).toBe("RESTORE_PROFILE_NOT_FOUND");
    expect(res.headers.getSetCookie()).toEqual([]);
    const empty = await signIn("{}", sign(stranger.key, SIGN_IN, undefined));
    expect(empty.status).toBe(403);
    expect(await userCount()).toBe(before);
  });

  it("refuses a valid token by another key for someone else's bapId", async () => {
    const attacker = identity();
    const body = JSON.stringify({ bapId: id.bapId });
    const res = await signIn(body, sign(attacker.key, SIGN_IN, body));
    expect(res.status).toBe(403);
    expect(res.json.code).toBe("RESTORE_PROFILE_NOT_FOUND");
  });

  it("refuses forged, stale, future, replayed, misdirected and body-swapped tokens with 401", async () => {
    const attacker = identity();
    const body = JSON.stringify({ bapId: id.bapId });
    const forged = sign(attacker.key, SIGN_IN, body).split("|");
    forged[0] = id.pubkey; // victim's pubkey, attacker's BRC-77 signature
    const minutes = (m: number) => new Date(Date.now() + m * 60_000).toISOString();
    const used = sign(id.key, SIGN_IN, body);
    expect((await signIn(body, used)).status).toBe(200);
    const other = identity();
    const cases: Record<string, string | undefined> = {
      missing: undefined,
      malformed: "a|b|c",
      forged: forged.join("|"),
      stale: sign(id.key, SIGN_IN, body, minutes(-6)),
      future: sign(id.key, SIGN_IN, body, minutes(6)),
      replayed: used,
      "another path": sign(id.key, "/api/auth/sign-in/email", body),
      "another body": sign(id.key, SIGN_IN, JSON.stringify({ bapId: other.bapId })),
      "no body bound": sign(id.key, SIGN_IN, undefined),
    };
    for (const [name, authToken] of Object.entries(cases)) {
      const res = await signIn(body, authToken);
      expect(res.status, name).toBe(401);
      expect(res.json.code, name).toBe("INVALID_AUTH_TOKEN");
      expect(res.headers.getSetCookie(), name).toEqual([]);
    }
  });

  it("refuses bodies that are not exactly the compact single-key JSON", async () => {
    for (const body of [`{ "bapId": "${id.bapId}" }`, JSON.stringify({ bapId: id.bapId, extra: 1 }), JSON.stringify({ bapId: 5 }), "[]", "nope"]) {
      const res = await signIn(body, sign(id.key, SIGN_IN, body));
      expect(res.status, body).toBe(400);
    }
  });
});

describe("authorization with a key-signed-in identity", () => {
  it("issues ID tokens and userinfo carrying the selected identity's claims", async () => {
    const id = identity();
    expect((await enrol(id)).status).toBe(200);
    const body = JSON.stringify({ bapId: id.bapId });
    const signedIn = await signIn(body, sign(id.key, SIGN_IN, body));
    const cookie = cookiesOf(signedIn.headers);
    const client = await registerClient(server);
    const { verifier, challenge } = pkce();
    const auth = await authorize(server, { clientId: client.client_id, cookie, challenge, scope: "openid profile" });
    const tokens = await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier });
    expect(tokens.status).toBe(200);
    const { payload } = await jwtVerify(tokens.json.id_token, createRemoteJWKSet(new URL(`${server.url}/api/auth/jwks`)), { issuer: server.url, audience: client.client_id });
    expect(payload.bap_id).toBe(id.bapId);
    expect(payload.pubkey).toBe(id.pubkey);
    expect(JSON.parse(String(payload.bap))).toMatchObject({ id: id.bapId, rootAddress: id.key.toPublicKey().toAddress() });
    const info = await server.api("/api/auth/oauth2/userinfo", { headers: { authorization: `Bearer ${tokens.json.access_token}` } });
    expect(info.json).toMatchObject({ bap_id: id.bapId, pubkey: id.pubkey });
    const consent = await server.db.selectFrom("oauthConsent").select(["referenceId"]).where("clientId", "=", client.client_id).executeTakeFirstOrThrow();
    expect(consent.referenceId).toBe(id.bapId);
  });
});

import { createHash } from "node:crypto";
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { authorize, pkce, registerClient, signUp, token } from "../helpers/oauth.js";
import { postForm } from "../helpers/server.js";
import { newIdentity, recordIdentity } from "../helpers/bap.js";
import { refreshAnswerer, refreshLaneRoute } from "../../plugins/fast-lane/refresh.js";
import { refreshGrantStore } from "../../plugins/oauth-store/refresh.js";
import { createJwk } from "better-auth/plugins";

/**
 * plugins/fast-lane/refresh.ts answers the common refresh grant (a confidential client with
 * client_secret_basic, an opaque refresh token bound to no resource or key) from one read and one
 * short transaction. Its answers and the rows it writes must be oauth-provider's: each test runs
 * the same grant both ways, the generic endpoint reached with a form field the fast path does not
 * take (`x`, which the endpoint's body schema drops), and compares. Whether the fast path answered
 * at all is checked on its answerer directly, over the same database.
 */
const server = useTestServer();
const REDIRECT = "https://rp.example.com/callback";
const basicAuth = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
const sha256 = (value: string) => createHash("sha256").update(value).digest("base64url");

interface Pair {
  access_token: string;
  refresh_token: string;
  id_token?: string;
  scope: string;
  token_type: string;
  expires_in: number;
  expires_at: number;
}

async function setup(options: { scope?: string; metadata?: Record<string, unknown>; identity?: boolean } = {}) {
  const person = await signUp(server);
  if (options.identity) {
    const id = newIdentity();
    await recordIdentity(server, person.user.id, { bapId: id.bapId, memberPubkey: id.pubkey, primary: true });
  }
  const client = await registerClient(server, { application_type: "web", token_endpoint_auth_method: "client_secret_basic", redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"], ...options.metadata });
  const auth = basicAuth(client.client_id, client.client_secret!);
  const { verifier, challenge } = pkce();
  const code = await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge, scope: options.scope ?? "openid profile email offline_access", redirectUri: REDIRECT });
  const res = await token(server, { grant_type: "authorization_code", code: code.code!, redirect_uri: REDIRECT, code_verifier: verifier }, { authorization: auth });
  expect(res.status, res.text).toBe(200);
  return { person, client, auth, tokens: res.json as Pair };
}

const refresh = (auth: string, fields: Record<string, string>, headers: Record<string, string> = {}) => token(server, { grant_type: "refresh_token", ...fields }, { authorization: auth, ...headers });
/** The same grant through oauth-provider's own endpoint. */
const generic = (auth: string, fields: Record<string, string>) => refresh(auth, { ...fields, x: "generic" });

/** What two answers must share: everything but the random tokens and the times they were issued at. */
function shape(pair: Pair): { keys: string[]; token_type: string; scope: string; expires_in: number; idToken: Record<string, unknown> | undefined } {
  const claims = pair.id_token ? decodeJwt(pair.id_token) : undefined;
  const { iat, exp, at_hash, ...rest } = claims ?? {};
  return {
    keys: Object.keys(pair),
    token_type: pair.token_type,
    scope: pair.scope,
    expires_in: pair.expires_in,
    idToken: claims ? { ...(rest as Record<string, unknown>), lifetime: Number(exp) - Number(iat), header: decodeProtectedHeader(pair.id_token!), hasAtHash: typeof at_hash === "string" } : undefined,
  };
}

async function storedRows(pair: Pair) {
  const refreshRow = await server.db.selectFrom("oauthRefreshToken").selectAll().where("token", "=", sha256(pair.refresh_token)).executeTakeFirstOrThrow();
  const accessRow = await server.db.selectFrom("oauthAccessToken").selectAll().where("token", "=", sha256(pair.access_token)).executeTakeFirstOrThrow();
  expect(accessRow.refreshId).toBe(refreshRow.id);
  const json = (v: unknown) => (typeof v === "string" ? JSON.parse(v) : v);
  const ms = (v: unknown) => new Date(v as string).getTime();
  const common = (row: typeof refreshRow | typeof accessRow) => ({
    clientId: row.clientId,
    sessionId: row.sessionId,
    userId: row.userId,
    referenceId: row.referenceId,
    authorizationCodeId: row.authorizationCodeId,
    resources: json(row.resources),
    requestedUserInfoClaims: json(row.requestedUserInfoClaims),
    confirmation: json(row.confirmation),
    scopes: json(row.scopes),
    revoked: row.revoked,
    lifetime: ms(row.expiresAt) - ms(row.createdAt),
  });
  return { refresh: { ...common(refreshRow), authTime: refreshRow.authTime ? ms(refreshRow.authTime) : null, rotatedAt: refreshRow.rotatedAt }, access: common(accessRow) };
}

/** The fast path's answerer over the test server's database and context: null when it leaves the request to the endpoint. */
function answerer() {
  const issued: string[] = [];
  const answer = refreshAnswerer({
    store: refreshGrantStore(server.database),
    context: server.auth.$context,
    issued: (clientId) => issued.push(clientId),
    failed: () => {},
  });
  return { answer, issued };
}

describe("fast refresh grant", () => {
  it("issues the same answer and rows as oauth-provider, ID token claims included", async () => {
    const fast = await setup({ identity: true });
    const slow = await setup({ identity: true });
    const a = await refresh(fast.auth, { refresh_token: fast.tokens.refresh_token });
    const b = await generic(slow.auth, { refresh_token: slow.tokens.refresh_token });
    expect(a.status, a.text).toBe(200);
    expect(b.status, b.text).toBe(200);
    for (const name of ["content-type", "cache-control", "pragma"]) expect(a.headers.get(name), name).toBe(b.headers.get(name));
    const [pa, pb] = [a.json as Pair, b.json as Pair];
    const sa = shape(pa);
    const sb = shape(pb);
    // The subject, client, session and identity differ between the two grants: compare them to their own.
    expect(sa.idToken).toMatchObject({ sub: fast.person.user.id, aud: fast.client.client_id, iss: server.url });
    expect(sb.idToken).toMatchObject({ sub: slow.person.user.id, aud: slow.client.client_id, iss: server.url });
    expect(typeof sa.idToken?.bap_id).toBe("string");
    const strip = (s: ReturnType<typeof shape>) => ({ ...s, idToken: { ...s.idToken, sub: 0, aud: 0, bap_id: 0, bap: 0, auth_time: typeof s.idToken?.auth_time } });
    expect(strip(sa)).toEqual(strip(sb));
    expect(Object.keys(decodeJwt(pa.id_token!)).sort()).toEqual(Object.keys(decodeJwt(pb.id_token!)).sort());
    // Both are signed by the key the JWKS publishes.
    const keys = createLocalJWKSet((await (await fetch(`${server.url}/api/auth/jwks`)).json()) as Parameters<typeof createLocalJWKSet>[0]);
    for (const idToken of [pa.id_token!, pb.id_token!]) await expect(jwtVerify(idToken, keys, { issuer: server.url })).resolves.toBeTruthy();
    // at_hash is the access token's (OIDC Core §3.1.3.6, RS256: SHA-256's left half).
    expect(decodeJwt(pa.id_token!).at_hash).toBe(createHash("sha256").update(pa.access_token).digest().subarray(0, 16).toString("base64url"));

    const ra = await storedRows(pa);
    const rb = await storedRows(pb);
    const own = (rows: Awaited<ReturnType<typeof storedRows>>) => ({
      refresh: { ...rows.refresh, clientId: 0, sessionId: typeof rows.refresh.sessionId, userId: 0, referenceId: typeof rows.refresh.referenceId, authorizationCodeId: typeof rows.refresh.authorizationCodeId, authTime: typeof rows.refresh.authTime },
      access: { ...rows.access, clientId: 0, sessionId: typeof rows.access.sessionId, userId: 0, referenceId: typeof rows.access.referenceId, authorizationCodeId: typeof rows.access.authorizationCodeId },
    });
    expect(own(ra)).toEqual(own(rb));
    expect(ra.refresh).toMatchObject({ clientId: fast.client.client_id, userId: fast.person.user.id });
    // The lane's rows have ids that follow time (lib/db/ids.ts), 32 characters like oauth-provider's.
    for (const table of ["oauthRefreshToken", "oauthAccessToken"] as const) {
      const { id } = await server.db.selectFrom(table).select("id").where("token", "=", sha256(table === "oauthRefreshToken" ? pa.refresh_token : pa.access_token)).executeTakeFirstOrThrow();
      expect(id).toMatch(/^[0-9a-z]{9}[A-Za-z0-9]{23}$/);
      expect(Math.abs(parseInt(id.slice(0, 9), 36) - Date.now())).toBeLessThan(60_000);
    }

    // The presented tokens are rotated the same way: revoked, marked rotated, and refused next time.
    for (const presented of [fast.tokens.refresh_token, slow.tokens.refresh_token]) {
      const old = await server.db.selectFrom("oauthRefreshToken").select(["revoked", "rotatedAt"]).where("token", "=", sha256(presented)).executeTakeFirstOrThrow();
      expect(old.revoked).not.toBeNull();
      expect(old.rotatedAt).toEqual(old.revoked);
    }
  });

  it("takes the ID token's profile from the identities read with the grant: the primary one in force, never a suspended one", async () => {
    const { answer } = answerer();
    const { auth, tokens, person } = await setup({ identity: true });
    const first = await server.db.selectFrom("bapIdentity").select(["id", "bapId"]).where("userId", "=", person.user.id).executeTakeFirstOrThrow();
    const second = newIdentity();
    await recordIdentity(server, person.user.id, { bapId: second.bapId, memberPubkey: second.pubkey, createdAt: new Date(Date.now() + 1000) });
    const fastly = async (refreshToken: string) => {
      const res = await answer({ authorization: auth }, new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken }).toString());
      expect(res?.status, "answered by the fast path").toBe(200);
      return JSON.parse(res!.body) as Pair;
    };
    // Both in force: the primary one.
    const a = await fastly(tokens.refresh_token);
    expect(decodeJwt(a.id_token!).bap_id).toBe(first.bapId);
    // The primary one suspended: the other, here and on the generic path alike.
    await server.db.updateTable("bapIdentity").set({ suspendedAt: new Date() }).where("id", "=", first.id).execute();
    const b = await fastly(a.refresh_token);
    expect(decodeJwt(b.id_token!).bap_id).toBe(second.bapId);
    const c = await generic(auth, { refresh_token: b.refresh_token });
    expect(c.status, c.text).toBe(200);
    expect(decodeJwt((c.json as Pair).id_token!).bap_id).toBe(second.bapId);
    // None in force: no profile claims from an identity at all.
    await server.db.updateTable("bapIdentity").set({ suspendedAt: new Date() }).where("userId", "=", person.user.id).execute();
    const d = await fastly((c.json as Pair).refresh_token);
    expect(decodeJwt(d.id_token!)).not.toHaveProperty("bap_id");
    // Confirmed again: read afresh on the next grant, nothing kept from the last.
    await server.db.updateTable("bapIdentity").set({ suspendedAt: null }).where("id", "=", first.id).execute();
    const e = await fastly(d.refresh_token);
    expect(decodeJwt(e.id_token!).bap_id).toBe(first.bapId);
  });

  it("signs with a new signing key as soon as it is made, not a key kept from before", async () => {
    const { auth, tokens } = await setup();
    const before = await refresh(auth, { refresh_token: tokens.refresh_token });
    expect(before.status, before.text).toBe(200);
    const oldKid = decodeProtectedHeader((before.json as Pair).id_token!).kid;
    const context = await server.auth.$context;
    const jwt = context.options.plugins?.find((plugin) => plugin.id === "jwt") as { options?: Parameters<typeof createJwk>[1] };
    const made = (await createJwk({ context } as never, jwt.options)) as { id: string };
    expect(made.id).not.toBe(oldKid);
    const after = await refresh(auth, { refresh_token: (before.json as Pair).refresh_token });
    expect(after.status, after.text).toBe(200);
    const idToken = (after.json as Pair).id_token!;
    expect(decodeProtectedHeader(idToken).kid).toBe(made.id);
    const keys = createLocalJWKSet((await (await fetch(`${server.url}/api/auth/jwks`)).json()) as Parameters<typeof createLocalJWKSet>[0]);
    await expect(jwtVerify(idToken, keys, { issuer: server.url })).resolves.toBeTruthy();
  });

  it("the new pair works: the access token introspects active, the refresh token refreshes again", async () => {
    const { auth, tokens, person } = await setup();
    const first = await refresh(auth, { refresh_token: tokens.refresh_token });
    expect(first.status, first.text).toBe(200);
    const pair = first.json as Pair;
    const introspected = await postForm(server, "/api/auth/oauth2/introspect", { token: pair.access_token }, { authorization: auth });
    expect(introspected.json).toMatchObject({ active: true, sub: person.user.id, scope: "openid profile email offline_access" });
    const second = await refresh(auth, { refresh_token: pair.refresh_token });
    expect(second.status, second.text).toBe(200);
    expect((second.json as Pair).refresh_token).not.toBe(pair.refresh_token);
  });

  it("narrows scope on request, and never widens it", async () => {
    const { auth, tokens } = await setup();
    const narrowed = await refresh(auth, { refresh_token: tokens.refresh_token, scope: "openid offline_access" });
    expect(narrowed.status, narrowed.text).toBe(200);
    expect((narrowed.json as Pair).scope).toBe("openid offline_access");
    const rows = await storedRows(narrowed.json as Pair);
    expect(rows.refresh.scopes).toEqual(["openid", "offline_access"]);
    const widened = await refresh(auth, { refresh_token: (narrowed.json as Pair).refresh_token, scope: "openid profile offline_access" });
    expect(widened.status).toBe(400);
    expect(widened.json).toMatchObject({ error: "invalid_scope" });
  });

  it("without openid there is no ID token, as oauth-provider answers", async () => {
    const fast = await setup({ scope: "openid profile offline_access" });
    const a = await refresh(fast.auth, { refresh_token: fast.tokens.refresh_token, scope: "profile offline_access" });
    const slow = await setup({ scope: "openid profile offline_access" });
    const b = await generic(slow.auth, { refresh_token: slow.tokens.refresh_token, scope: "profile offline_access" });
    expect(a.status, a.text).toBe(200);
    expect(shape(a.json as Pair)).toEqual(shape(b.json as Pair));
    expect((a.json as Pair).id_token).toBeUndefined();
  });

  it("a reused refresh token is refused and ends the whole grant, as before", async () => {
    const { auth, tokens } = await setup();
    const first = await refresh(auth, { refresh_token: tokens.refresh_token });
    expect(first.status).toBe(200);
    const reuse = await refresh(auth, { refresh_token: tokens.refresh_token });
    expect(reuse.status).toBe(400);
    expect(reuse.json).toMatchObject({ error: "invalid_grant" });
    // The family is gone: the token issued by the first refresh no longer works either.
    const after = await refresh(auth, { refresh_token: (first.json as Pair).refresh_token });
    expect(after.status).toBe(400);
    expect(after.json).toMatchObject({ error: "invalid_grant" });
  });

  it("of two concurrent uses of one token, exactly one gets a pair", async () => {
    const { auth, tokens } = await setup();
    const answers = await Promise.all([1, 2, 3].map(() => refresh(auth, { refresh_token: tokens.refresh_token })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400]);
  });

  it("answers the common case itself, and leaves every other request to the endpoint", async () => {
    const { answer, issued } = answerer();
    const { auth, tokens, client } = await setup();
    const other = await setup();
    const form = (fields: Record<string, string>) => new URLSearchParams({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, ...fields }).toString();
    const declined: [string, Parameters<typeof answer>[0], string][] = [
      ["a wrong secret", { authorization: basicAuth(client.client_id, "wrong") }, form({})],
      ["another field", { authorization: auth }, form({ resource: "https://api.example.com" })],
      ["a repeated field", { authorization: auth }, `${form({})}&grant_type=refresh_token`],
      ["a DPoP proof", { authorization: auth, dpop: "x.y.z" }, form({})],
      ["a member-key signature", { authorization: auth, memberKeySignature: "sig" }, form({})],
      ["a cookie", { authorization: auth, cookie: "a=b" }, form({})],
      ["an Origin", { authorization: auth, origin: "https://app.example.com" }, form({})],
      ["credentials in the form", {}, form({ client_id: client.client_id, client_secret: client.client_secret! })],
      ["a widened scope", { authorization: auth }, form({ scope: "openid admin" })],
      ["an unknown token", { authorization: auth }, new URLSearchParams({ grant_type: "refresh_token", refresh_token: "nope" }).toString()],
      ["another client's token", { authorization: other.auth }, form({})],
    ];
    // The store reads the token by its hash alone: held by another client, it is not that client's.
    const store = refreshGrantStore(server.database);
    expect((await store.findGrant(other.client.client_id, sha256(tokens.refresh_token)))?.token).toBeNull();
    expect((await store.findGrant(client.client_id, sha256(tokens.refresh_token)))?.token?.clientId).toBe(client.client_id);
    for (const [name, headers, body] of declined) expect(await answer(headers, body), name).toBeNull();
    expect(issued).toEqual([]);
    const answered = await answer({ authorization: auth }, form({}));
    expect(answered?.status).toBe(200);
    expect(issued).toEqual([client.client_id]);
    // Rotated now: the same token is the endpoint's to refuse (reuse).
    expect(await answer({ authorization: auth }, form({}))).toBeNull();
  });

  it("leaves a token bound to a resource, a client without the refresh grant registered, and a disabled client to the endpoint", async () => {
    const { answer } = answerer();
    const bound = await setup();
    await server.db.updateTable("oauthRefreshToken").set({ resources: JSON.stringify(["https://api.example.com"]) }).where("token", "=", sha256(bound.tokens.refresh_token)).execute();
    const body = (t: string) => new URLSearchParams({ grant_type: "refresh_token", refresh_token: t }).toString();
    expect(await answer({ authorization: bound.auth }, body(bound.tokens.refresh_token))).toBeNull();
    const disabled = await setup();
    await server.db.updateTable("oauthClient").set({ disabled: true }).where("clientId", "=", disabled.client.client_id).execute();
    expect(await answer({ authorization: disabled.auth }, body(disabled.tokens.refresh_token))).toBeNull();
    const res = await refresh(disabled.auth, { refresh_token: disabled.tokens.refresh_token });
    expect(res.status).toBe(401);
    expect(res.json).toMatchObject({ error: "invalid_client" });
  });
});

describe("the fast refresh in the fast lane", () => {
  // Never ready (its context never settles): only the route's charge is asked here.
  const route = refreshLaneRoute({ store: {} as never, context: new Promise(() => {}), issued() {}, failed() {}, path: "/api/auth/oauth2/token" });
  const basic = `Basic ${Buffer.from("client-1:secret-1").toString("base64")}`;
  const charge = (body: string, headers: Record<string, string> = {}) => route.credential!({ headers: { authorization: basic, ...headers }, body });

  it("charges the client for a refresh grant it could answer", () => {
    expect(charge("grant_type=refresh_token&refresh_token=abc")).toEqual({ limit: "client", key: "client:client-1" });
    expect(charge("refresh_token=abc&grant_type=refresh_token&scope=openid")).toEqual({ limit: "client", key: "client:client-1" });
  });

  it("takes no charge for another grant or a request it leaves to the app, which counts it itself", () => {
    expect(charge("grant_type=authorization_code&code=abc&redirect_uri=x&code_verifier=y")).toBeNull();
    expect(charge("grant_type=client_credentials")).toBeNull();
    expect(charge("grant_type=refresh_token_x&refresh_token=abc")).toBeNull();
    for (const header of ["origin", "cookie", "dpop", "x-auth-token"]) expect(charge("grant_type=refresh_token&refresh_token=abc", { [header]: "x" })).toBeNull();
  });
});

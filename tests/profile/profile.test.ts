import { randomBytes } from "node:crypto";
import { PrivateKey } from "@bsv/sdk";
import { describe, expect, it } from "vitest";
import { newIdentity as identity, signRequest, type TestIdentity } from "../helpers/bap.js";
import { useTestServer } from "../helpers/fixtures.js";
import { signUp } from "../helpers/oauth.js";

const server = useTestServer();

async function register(cookie: string, id: TestIdentity, extra: Record<string, unknown> = {}, signer = id.key) {
  const body = JSON.stringify({ bapId: id.bapId, ...extra });
  return server.api("/api/user/bap-ids", { cookie, body, headers: { "x-auth-token": signRequest(signer, "/api/user/bap-ids", body) } });
}

const problemShape = (res: { status: number; headers: Headers; json: any }, status: number) => {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  expect(res.json).toMatchObject({ status, title: expect.any(String), detail: expect.any(String), type: expect.any(String) });
};

describe("/api/user/bap-ids", () => {
  it("registers identities proven by their member key; the first is primary", async () => {
    const person = await signUp(server);
    const a = identity();
    const b = identity();
    const first = await register(person.cookie, a, { name: "Main", counter: 0 });
    expect(first.status).toBe(201);
    expect(first.json.bapId).toMatchObject({ identity_key: a.bapId, root_address: a.address, current_address: a.address, is_primary: true, name: "Main", counter: 0, member_pubkey: a.pubkey });
    expect((await register(person.cookie, b, { name: "Alt" })).status).toBe(201);
    const list = await server.api("/api/user/bap-ids", { cookie: person.cookie });
    expect(list.status).toBe(200);
    expect(list.json.bapIds.map((r: any) => [r.identity_key, r.is_primary])).toEqual([
      [a.bapId, true],
      [b.bapId, false],
    ]);
    // Switching the primary leaves exactly one.
    expect((await register(person.cookie, b, { isPrimary: true })).status).toBe(200);
    const after = await server.api("/api/user/bap-ids", { cookie: person.cookie });
    expect(after.json.bapIds.filter((r: any) => r.is_primary).map((r: any) => r.identity_key)).toEqual([b.bapId]);
  });

  it("refuses registration without a signature, by another key, or of someone else's identity", async () => {
    const person = await signUp(server);
    const other = await signUp(server);
    const id = identity();
    const noSig = await server.api("/api/user/bap-ids", { cookie: person.cookie, body: { bapId: id.bapId } });
    problemShape(noSig, 401);
    problemShape(await register(person.cookie, id, {}, PrivateKey.fromRandom()), 403);
    expect((await register(person.cookie, id)).status).toBe(201);
    const stolen = await register(other.cookie, id);
    problemShape(stolen, 409);
    expect(stolen.json.code).toBe("BAP_ID_TAKEN");
  });

  it("requires a session to list or register", async () => {
    problemShape(await server.api("/api/user/bap-ids"), 401);
    const id = identity();
    problemShape(await register("", id), 401);
  });

  it("offers a public lookup by pubkey without account details", async () => {
    const person = await signUp(server);
    const id = identity();
    await register(person.cookie, id, { name: "Private label" });
    const res = await server.api(`/api/user/bap-ids?pubkey=${id.pubkey}`);
    expect(res.status).toBe(200);
    expect(res.json.bapIds).toEqual([{ id: expect.any(String), identity_key: id.bapId, root_address: id.address, current_address: id.address, identity: null }]);
    problemShape(await server.api("/api/user/bap-ids?pubkey=nothex"), 400);
  });

  it("validates input: bad bapId, wrong types, unknown members, malformed JSON", async () => {
    const person = await signUp(server);
    const bodies = [JSON.stringify({ bapId: "not a bap id!" }), JSON.stringify({ bapId: identity().bapId, counter: "one" }), JSON.stringify({ bapId: identity().bapId, wif: "L1..." }), "{broken"];
    for (const body of bodies) {
      const res = await server.api("/api/user/bap-ids", { cookie: person.cookie, body });
      expect(res.status, body).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
    }
  });
});

describe("/api/bap/profile drafts and publications", () => {
  it("saves, shows (to the owner only) and deletes a draft without publishing anything", async () => {
    const person = await signUp(server);
    const id = identity();
    await register(person.cookie, id);
    const save = await server.api("/api/bap/profile", { cookie: person.cookie, body: { bapId: id.bapId, profile: { alternateName: "draft name" } } });
    expect(save.status).toBe(200);
    expect(save.json).toMatchObject({ status: "OK", result: { bapId: id.bapId, draft: true } });
    const mine = await server.api(`/api/bap/profile?bapId=${id.bapId}`, { cookie: person.cookie });
    expect(mine.json).toMatchObject({ status: "OK", result: { identity_key: id.bapId, published: false, unpublished: true, draft: { profile: { alternateName: "draft name" } } } });
    const anonymous = await server.api(`/api/bap/profile?bapId=${id.bapId}`);
    expect(anonymous.json.result.draft).toBeUndefined();
    const byKey = await server.api(`/api/bap/profile?pubkey=${id.pubkey}`);
    expect(byKey.json.result.identity_key).toBe(id.bapId);
    expect(await server.db.selectFrom("bapPublication").selectAll().where("bapId", "=", id.bapId).execute()).toEqual([]);
    expect((await server.api(`/api/bap/profile?bapId=${id.bapId}`, { cookie: person.cookie, method: "DELETE" })).status).toBe(200);
    problemShape(await server.api(`/api/bap/profile?bapId=${id.bapId}`, { cookie: person.cookie, method: "DELETE" }), 404);
  });

  it("refuses drafts for identities the caller does not own", async () => {
    const owner = await signUp(server);
    const intruder = await signUp(server);
    const id = identity();
    await register(owner.cookie, id);
    problemShape(await server.api("/api/bap/profile", { cookie: intruder.cookie, body: { bapId: id.bapId, profile: { x: 1 } } }), 404);
    problemShape(await server.api("/api/bap/profile", { body: { bapId: id.bapId, profile: { x: 1 } } }), 401);
  });

  it("records a publication (txid of 64 lowercase hex, profile with identity) and serves it", async () => {
    const person = await signUp(server);
    const id = identity();
    await register(person.cookie, id);
    await server.api("/api/bap/profile", { cookie: person.cookie, body: { bapId: id.bapId, profile: { alternateName: "x" } } });
    // A fresh txid per run: txids are unique, and a PostgreSQL test database outlives one run.
    const txid = randomBytes(32).toString("hex");
    const bad = [
      { bapId: id.bapId, txid: txid.toUpperCase().replace(/^[0-9]/, "A"), profile: { identity: {} } },
      { bapId: id.bapId, txid: txid.slice(2), profile: { identity: {} } },
      { bapId: id.bapId, txid, profile: { name: "no identity" } },
    ];
    for (const body of bad) problemShape(await server.api("/api/bap/profile/published", { cookie: person.cookie, body }), 400);
    const ok = await server.api("/api/bap/profile/published", { cookie: person.cookie, body: { bapId: id.bapId, txid, profile: { identity: { alternateName: "Satoshi" } }, kind: "profile" } });
    expect(ok.status).toBe(201);
    const got = await server.api(`/api/bap/profile/published?bapId=${id.bapId}`);
    expect(got.json).toMatchObject({ status: "OK", result: { bapId: id.bapId, txid, profile: { identity: { alternateName: "Satoshi" } }, kind: "profile" } });
    // Publishing clears the draft and updates the registration record's identity.
    const profile = await server.api(`/api/bap/profile?bapId=${id.bapId}`, { cookie: person.cookie });
    expect(profile.json.result).toMatchObject({ published: true, txid, identity: { alternateName: "Satoshi" } });
    expect(profile.json.result.draft).toBeUndefined();
    problemShape(await server.api("/api/bap/profile/published", { cookie: person.cookie, body: { bapId: id.bapId, txid, profile: { identity: {} } } }), 409);
    problemShape(await server.api(`/api/bap/profile/published?bapId=${identity().bapId}`), 404);
  });

  it("has no /api/profile/create and no PUT /api/profile", async () => {
    expect((await server.api("/api/profile/create", { body: {} })).status).toBe(404);
    expect((await server.api("/api/profile", { method: "PUT", body: {} })).status).toBe(404);
  });
});

describe("choosing the identity an app sees", () => {
  it("shows a choice on the consent page and puts the chosen identity in the tokens", async () => {
    const { authorizeUrl, pkce, registerClient, REDIRECT, token } = await import("../helpers/oauth.js");
    const { createRemoteJWKSet, jwtVerify } = await import("jose");
    const person = await signUp(server);
    const first = identity();
    const second = identity();
    await register(person.cookie, first, { name: "Work" });
    await register(person.cookie, second, { name: "Play" });
    const client = await registerClient(server);
    const { verifier, challenge } = pkce();
    const params = { response_type: "code", client_id: client.client_id, redirect_uri: REDIRECT, scope: "openid profile", state: "pick", code_challenge: challenge, code_challenge_method: "S256" };
    const start = await server.api(authorizeUrl(server, params), { cookie: person.cookie, headers: { accept: "text/html" } });
    const consentUrl = new URL(start.json.url, server.url);
    expect(consentUrl.pathname).toBe("/consent");

    const page = await server.api(consentUrl.pathname + consentUrl.search, { cookie: person.cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain("Which identity should");
    expect(page.text).toContain(first.bapId);
    expect(page.text).toContain(second.bapId);

    const oauthQuery = page.text.match(/name="oauth_query" value="([^"]+)"/)![1]!.replace(/&amp;/g, "&");
    const form = new URLSearchParams({ oauth_query: oauthQuery, bap_id: second.bapId, decision: "allow" }).toString();
    const decided = await server.api("/consent", { cookie: person.cookie, body: form, headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(decided.status).toBe(303);
    const back = new URL(decided.headers.get("location")!);
    expect(back.searchParams.get("state")).toBe("pick");
    const tokens = await token(server, { grant_type: "authorization_code", code: back.searchParams.get("code")!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier });
    const { payload } = await jwtVerify(tokens.json.id_token, createRemoteJWKSet(new URL(`${server.url}/api/auth/jwks`)), { issuer: server.url, audience: client.client_id });
    expect(payload.bap_id).toBe(second.bapId);
    const info = await server.api("/api/auth/oauth2/userinfo", { headers: { authorization: `Bearer ${tokens.json.access_token}` } });
    expect(info.json.bap_id).toBe(second.bapId);
  });

  it("ignores a selection of an identity the user does not own", async () => {
    const { authorize, pkce, registerClient, REDIRECT, token } = await import("../helpers/oauth.js");
    const { decodeJwt } = await import("jose");
    const victim = await signUp(server);
    const theirs = identity();
    await register(victim.cookie, theirs);
    const person = await signUp(server);
    const mine = identity();
    await register(person.cookie, mine);
    expect((await server.api("/api/auth/update-session", { cookie: person.cookie, body: { selectedBapId: theirs.bapId } })).status).toBe(200);
    const client = await registerClient(server);
    const { verifier, challenge } = pkce();
    const auth = await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge, scope: "openid profile" });
    const tokens = await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier });
    expect(decodeJwt(tokens.json.id_token).bap_id).toBe(mine.bapId);
  });
});

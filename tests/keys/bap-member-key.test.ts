import { randomBytes } from "node:crypto";
import { HD, PrivateKey } from "@bsv/sdk";
import { pullBackup, pushBackup } from "@sigma-auth/better-auth-plugin/client/sync";
import { BAP } from "bsv-bap";
import { describe, expect, it } from "vitest";
import { keySignIn, signRequest } from "../helpers/bap.js";
import { useTestServer } from "../helpers/fixtures.js";
import { signUp } from "../helpers/oauth.js";

/**
 * What proves control of a real bsv-bap identity: the key the published Sigma client signs
 * with is `exportMember().wif`. For a Type-42 identity (bsv-bap's current mode) that is the
 * root member key until the identity rotates; after `incrementPath()` it is the key at the new
 * path, which the registered key hands over to through POST /api/user/bap-ids/member-key.
 */
const server = useTestServer();
const REGISTER = "/api/user/bap-ids";
const ROTATE = "/api/user/bap-ids/member-key";
const config = () => ({ serverUrl: server.url });
const ciphertext = () => randomBytes(96).toString("base64");

/** A Sigma keystore: a Type-42 bsv-bap master with one identity. */
function keystore() {
  const bap = new BAP({ rootPk: PrivateKey.fromRandom().toWif() });
  const identity = bap.newId();
  const bapId = identity.getIdentityKey();
  const signer = () => PrivateKey.fromWif(bap.getId(bapId)!.exportMember().wif);
  return { bap, identity, bapId, signer };
}

function register(cookie: string, bapId: string, key: PrivateKey) {
  const body = JSON.stringify({ bapId });
  return server.api(REGISTER, { cookie, body, headers: { "x-auth-token": signRequest(key, REGISTER, body) } });
}

function rotate(cookie: string, bapId: string, from: PrivateKey, to: PrivateKey, opts: { proofBy?: PrivateKey } = {}) {
  const body = JSON.stringify({ bapId, memberPubkey: to.toPublicKey().toString() });
  return server.api(ROTATE, {
    cookie,
    body,
    headers: { "x-auth-token": signRequest(from, ROTATE, body), "x-member-key-proof": signRequest(opts.proofBy ?? to, ROTATE, body) },
  });
}

describe("registering a real bsv-bap identity with the key the Sigma client signs with", () => {
  it("accepts a Type-42 identity's exportMember() key and syncs through the published client", async () => {
    const person = await signUp(server);
    const { bap, bapId, signer } = keystore();
    const res = await register(person.cookie, bapId, signer());
    expect(res.status).toBe(201);
    expect(res.json.bapId).toMatchObject({ identity_key: bapId, member_pubkey: signer().toPublicKey().toString() });

    const backup = ciphertext();
    expect(await pushBackup(bap, bapId, backup, config())).toEqual({ success: true });
    expect((await pullBackup(bap, bapId, config())).encryptedBackup).toBe(backup);
  });

  it("refuses a legacy BIP32 identity's exported member key and says which key registers", async () => {
    const person = await signUp(server);
    const bap = new BAP(HD.fromRandom().toString());
    const identity = bap.newId();
    const bapId = identity.getIdentityKey();
    const res = await register(person.cookie, bapId, PrivateKey.fromWif(identity.exportMember().wif));
    expect(res.status).toBe(403);
    expect(res.json).toMatchObject({ code: "NOT_MEMBER_KEY", detail: expect.stringContaining("getWalletRoot(identity.rootPath)") });
    // The root member key, which the holder of the master can always derive, registers it.
    expect((await register(person.cookie, bapId, identity.getWalletRoot(identity.rootPath))).status).toBe(201);
  });
});

describe("POST /api/user/bap-ids/member-key (rotation)", () => {
  it("hands sync and key sign-in over to the rotated key, and the old key stops speaking for the identity", async () => {
    const person = await signUp(server);
    const { bap, identity, bapId, signer } = keystore();
    const root = signer();
    expect((await register(person.cookie, bapId, root)).status).toBe(201);

    identity.incrementPath();
    const first = signer();
    expect(first.toPublicKey().toString()).not.toBe(root.toPublicKey().toString());
    // Not registered yet: the published client's push is refused and nothing is stored.
    expect(await pushBackup(bap, bapId, ciphertext(), config())).toMatchObject({ success: false });

    const rotated = await rotate(person.cookie, bapId, root, first);
    expect(rotated.status).toBe(200);
    expect(rotated.json.bapId).toMatchObject({ identity_key: bapId, member_pubkey: first.toPublicKey().toString() });
    const backup = ciphertext();
    expect(await pushBackup(bap, bapId, backup, config())).toEqual({ success: true });
    expect((await pullBackup(bap, bapId, config())).encryptedBackup).toBe(backup);
    const signIn = await keySignIn(server, { key: first, bapId } as never);
    expect(signIn.status).toBe(200);
    expect(signIn.json.user.pubkey).toBe(first.toPublicKey().toString());

    // A second rotation is signed by the key in force; the first rotated key is then done.
    identity.incrementPath();
    const second = signer();
    expect((await rotate(person.cookie, bapId, second, PrivateKey.fromRandom())).status).toBe(403);
    expect((await rotate(person.cookie, bapId, first, second)).status).toBe(200);
    expect((await keySignIn(server, { key: first, bapId } as never)).status).toBe(403);
    expect((await rotate(person.cookie, bapId, first, PrivateKey.fromRandom())).status).toBe(403);
    expect((await keySignIn(server, { key: second, bapId } as never)).status).toBe(200);
  });

  it("refuses a missing or foreign new-key proof, a replay, another account's identity, and no session", async () => {
    const person = await signUp(server);
    const other = await signUp(server);
    const { identity, bapId, signer } = keystore();
    const root = signer();
    expect((await register(person.cookie, bapId, root)).status).toBe(201);
    identity.incrementPath();
    const next = signer();

    const body = JSON.stringify({ bapId, memberPubkey: next.toPublicKey().toString() });
    const withoutProof = await server.api(ROTATE, { cookie: person.cookie, body, headers: { "x-auth-token": signRequest(root, ROTATE, body) } });
    expect(withoutProof.status).toBe(401);
    expect(withoutProof.headers.get("content-type")).toContain("application/problem+json");
    expect((await rotate(person.cookie, bapId, root, next, { proofBy: PrivateKey.fromRandom() })).status).toBe(401);
    expect((await rotate(other.cookie, bapId, root, next)).status).toBe(404);
    expect((await rotate("", bapId, root, next)).status).toBe(401);

    const headers = { "x-auth-token": signRequest(root, ROTATE, body), "x-member-key-proof": signRequest(next, ROTATE, body) };
    expect((await server.api(ROTATE, { cookie: person.cookie, body, headers })).status).toBe(200);
    expect((await server.api(ROTATE, { cookie: person.cookie, body, headers })).status).toBe(401);
    const list = await server.api(REGISTER, { cookie: person.cookie });
    expect(list.json.bapIds.map((r: any) => r.member_pubkey)).toEqual([next.toPublicKey().toString()]);
  });
});

import { PrivateKey, ProtoWallet, Utils } from "@bsv/sdk";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { personWithIdentity, type Person } from "../helpers/wallet.js";

const server = useTestServer();
const BINDING = "/api/certificates/wallet-binding";

function challenge(person: Person, key: PrivateKey, bapId = person.id.bapId) {
  return server.api(`${BINDING}/challenge`, { cookie: person.cookie, body: { bapId, identityKey: key.toPublicKey().toString() } });
}

/** What a BRC-100 wallet does with the challenge: a publicly verifiable BRC-3 signature. */
async function sign(key: PrivateKey, issued: { challenge: string; protocolID: [2, string]; keyID: string }) {
  const { signature } = await new ProtoWallet(key).createSignature({ data: Utils.toArray(issued.challenge, "utf8"), protocolID: issued.protocolID, keyID: issued.keyID, counterparty: "anyone" });
  return Utils.toHex(signature);
}

const verify = (person: Person, signature: string) => server.api(`${BINDING}/verify`, { cookie: person.cookie, body: { bapId: person.id.bapId, signature } });
const resolve = (query: string) => server.api(`${BINDING}/resolve?${query}`);

describe("wallet binding", () => {
  it("binds a wallet key to an owned identity, resolves it publicly, and revokes it", async () => {
    const person = await personWithIdentity(server);
    const key = PrivateKey.fromRandom();
    const issued = await challenge(person, key);
    expect(issued.status).toBe(200);
    expect(issued.headers.get("cache-control")).toBe("no-store");
    expect(issued.json).toMatchObject({ bapId: person.id.bapId, identityKey: key.toPublicKey().toString(), protocolID: [2, "bap wallet binding"], keyID: "1" });
    expect(issued.json.challenge).toContain(server.url);
    expect(Date.parse(issued.json.expiresAt)).toBeGreaterThan(Date.now());

    // Nothing resolves before the wallet signs.
    expect((await resolve(`bapId=${person.id.bapId}`)).status).toBe(404);

    const verified = await verify(person, await sign(key, issued.json));
    expect(verified.status).toBe(200);
    expect(verified.json).toEqual({ bapId: person.id.bapId, identityKey: key.toPublicKey().toString(), verifiedAt: expect.any(String) });

    const byId = await resolve(`bapId=${person.id.bapId}`);
    expect(byId.status).toBe(200);
    expect(byId.json).toEqual(verified.json);
    expect((await resolve(`identityKey=${key.toPublicKey().toString()}`)).json).toEqual({ identityKey: key.toPublicKey().toString(), bindings: [verified.json] });

    // A signed challenge is used up.
    expect((await verify(person, await sign(key, issued.json))).json.code).toBe("INVALID_WALLET_SIGNATURE");

    const revoked = await server.api(`${BINDING}/revoke`, { cookie: person.cookie, body: { bapId: person.id.bapId } });
    expect(revoked.json).toEqual({ bapId: person.id.bapId, revoked: true });
    expect((await resolve(`bapId=${person.id.bapId}`)).json.code).toBe("WALLET_BINDING_NOT_FOUND");
    expect((await server.api(`${BINDING}/revoke`, { cookie: person.cookie, body: { bapId: person.id.bapId } })).status).toBe(404);
  });

  it("refuses a signature by another key, and spends the challenge doing so", async () => {
    const person = await personWithIdentity(server);
    const key = PrivateKey.fromRandom();
    const issued = await challenge(person, key);
    const wrong = await verify(person, await sign(PrivateKey.fromRandom(), issued.json));
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("content-type")).toContain("application/problem+json");
    expect(wrong.json.code).toBe("INVALID_WALLET_SIGNATURE");
    expect((await verify(person, await sign(key, issued.json))).status).toBe(401);
  });

  it("keeps a verified binding while a new key's challenge is open, and moves it once the new key signs", async () => {
    const person = await personWithIdentity(server);
    const [first, second] = [PrivateKey.fromRandom(), PrivateKey.fromRandom()];
    await verify(person, await sign(first, (await challenge(person, first)).json));
    const pending = await challenge(person, second);
    expect((await resolve(`bapId=${person.id.bapId}`)).json.identityKey).toBe(first.toPublicKey().toString());
    expect((await verify(person, await sign(second, pending.json))).json.identityKey).toBe(second.toPublicKey().toString());
    expect((await resolve(`bapId=${person.id.bapId}`)).json.identityKey).toBe(second.toPublicKey().toString());
    expect((await resolve(`identityKey=${first.toPublicKey().toString()}`)).status).toBe(404);
  });

  it("answers only the identity's owner, signed in and from our own pages", async () => {
    const [owner, other] = [await personWithIdentity(server), await personWithIdentity(server)];
    const key = PrivateKey.fromRandom();
    expect((await challenge(other, key, owner.id.bapId)).status).toBe(404);
    const anonymous = await server.api(`${BINDING}/challenge`, { body: { bapId: owner.id.bapId, identityKey: key.toPublicKey().toString() } });
    expect(anonymous.status).toBe(401);
    const crossSite = await server.api(`${BINDING}/challenge`, { cookie: owner.cookie, headers: { origin: "https://elsewhere.example" }, body: { bapId: owner.id.bapId, identityKey: key.toPublicKey().toString() } });
    expect(crossSite.status).toBe(403);
    expect((await server.api(`${BINDING}/revoke`, { cookie: other.cookie, body: { bapId: owner.id.bapId } })).status).toBe(404);
    expect((await server.api(`/api/certificates/eligibility?bapId=${owner.id.bapId}`, { cookie: other.cookie })).status).toBe(404);
    expect((await server.api(`/api/certificates/eligibility?bapId=${owner.id.bapId}`)).status).toBe(401);
  });

  it("validates bodies and queries", async () => {
    const person = await personWithIdentity(server);
    const bad = await server.api(`${BINDING}/challenge`, { cookie: person.cookie, body: { bapId: person.id.bapId, identityKey: "04zz" } });
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].pointer).toBe("/identityKey");
    expect((await resolve("")).status).toBe(400);
  });
});

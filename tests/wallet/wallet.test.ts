import { PrivateKey, ProtoWallet } from "@bsv/sdk";
import { sigmaClient } from "@sigma-auth/better-auth-plugin/client";
import { createAuthClient, type BetterAuthClientPlugin } from "better-auth/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newIdentity, signRequest, type TestIdentity } from "../helpers/bap.js";
import { startIndexer, txo } from "../helpers/ordinals.js";
import { fullCodeFlow } from "../helpers/oauth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { CONNECT, connectWallet, newWallet, pathOnlyWalletToken, personWithIdentity as signedUpWithIdentity, walletToken, type Person } from "../helpers/wallet.js";

type SigmaActions = ReturnType<ReturnType<typeof sigmaClient>["getActions"]>;

let server: TestServer;
let indexer: Awaited<ReturnType<typeof startIndexer>>;
beforeAll(async () => {
  indexer = await startIndexer();
  server = await startTestServer({ ORDINALS_API_URL: indexer.url, ORDINALS_API_TIMEOUT: "300", OUTBOUND_ALLOW_PRIVATE: "true" });
});
afterAll(async () => {
  await server?.close();
  await indexer?.close();
});

const personWithIdentity = () => signedUpWithIdentity(server);

function connect(person: { cookie: string }, id: TestIdentity, token: string, provider = "yours", extra: Record<string, unknown> = {}) {
  return server.api(CONNECT, { cookie: person.cookie, body: { bapId: id.bapId, authToken: token, provider, ...extra } });
}

const connected = (person: Person, provider = "yours", w = newWallet()) => connectWallet(server, person, provider, w);

const problem = (res: { status: number; headers: Headers; json: any }, status: number, code?: string) => {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  expect(res.json).toMatchObject({ status, title: expect.any(String), detail: expect.any(String) });
  if (code) expect(res.json.code).toBe(code);
};

describe("wallet connections", () => {
  it("connects wallets proven by BSM and BRC-77 tokens, lists them, and keeps one primary", async () => {
    const person = await personWithIdentity();
    const a = newWallet();
    const first = await connect(person, person.id, walletToken(a, person.id.bapId, { scheme: "bsm" }), "yours", { paymentAddress: newWallet().address });
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-control")).toBe("no-store");
    expect(first.json).toEqual({
      success: true,
      walletAddress: a.address,
      pubkey: a.pubkey,
      provider: "yours",
      connectionMethod: "bitcoin-auth",
      connectedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      bapId: person.id.bapId,
      isPrimary: true,
    });
    const b = newWallet();
    const second = await connect(person, person.id, walletToken(b, person.id.bapId, { scheme: "brc77" }), "1sat");
    expect(second.status).toBe(200);
    expect(second.json).toMatchObject({ walletAddress: b.address, provider: "1sat", isPrimary: false });

    const list = await server.api(CONNECT, { cookie: person.cookie });
    expect(list.status).toBe(200);
    expect(list.json.wallets.map((w: any) => [w.address, w.provider, w.isPrimary])).toEqual([
      [a.address, "yours", true],
      [b.address, "1sat", false],
    ]);
    expect(list.json.wallets[0]).toMatchObject({ bapId: person.id.bapId, pubkey: a.pubkey, connectionMethod: "bitcoin-auth", isPayment: false, lastVerified: expect.any(String) });
    const byId = await server.api(`${CONNECT}?bapId=${person.id.bapId}`, { cookie: person.cookie });
    expect(byId.json.wallets).toHaveLength(2);

    const primary = await server.api("/api/wallet/set-primary", { cookie: person.cookie, body: { bapId: person.id.bapId, walletAddress: b.address } });
    expect(primary.status).toBe(200);
    expect(primary.json).toEqual({ success: true, bapId: person.id.bapId, primaryAddress: b.address });
    const address = await server.api(`/api/wallet/address?bapId=${person.id.bapId}`, { cookie: person.cookie });
    expect(address.status).toBe(200);
    expect(address.json).toMatchObject({ bapId: person.id.bapId, primaryAddress: b.address, paymentAddress: null, paymentProvider: null });
    expect(address.json.wallets).toHaveLength(2);

    // Removing the primary wallet removes the association only; the other one takes its place.
    const removed = await server.api(`${CONNECT}?bapId=${person.id.bapId}&address=${b.address}`, { method: "DELETE", cookie: person.cookie });
    expect(removed.status).toBe(200);
    expect(removed.json).toMatchObject({ success: true, walletAddress: b.address });
    const after = await server.api(`/api/wallet/address?bapId=${person.id.bapId}`, { cookie: person.cookie });
    expect(after.json.primaryAddress).toBe(a.address);
    problem(await server.api(`${CONNECT}?bapId=${person.id.bapId}&address=${b.address}`, { method: "DELETE", cookie: person.cookie }), 404, "WALLET_NOT_CONNECTED");
  });

  it("refuses forged, stale, wrong-path, malformed and replayed tokens", async () => {
    const person = await personWithIdentity();
    const w = newWallet();
    // Forged: another key's signature under this wallet's pubkey.
    const other = walletToken(newWallet(), person.id.bapId).split("|");
    const forged = [w.pubkey, ...other.slice(1)].join("|");
    problem(await connect(person, person.id, forged), 401, "INVALID_AUTH_TOKEN");
    const stale = walletToken(w, person.id.bapId, { timestamp: new Date(Date.now() - 10 * 60_000).toISOString() });
    problem(await connect(person, person.id, stale), 401, "INVALID_AUTH_TOKEN");
    problem(await connect(person, person.id, walletToken(w, person.id.bapId, { path: "/api/auth/sign-in/sigma" })), 401, "INVALID_AUTH_TOKEN");
    problem(await connect(person, person.id, "not|a|token"), 401, "INVALID_AUTH_TOKEN");
    const token = walletToken(w, person.id.bapId);
    expect((await connect(person, person.id, token)).status).toBe(200);
    problem(await connect(person, person.id, token), 401, "INVALID_AUTH_TOKEN");
    // Nothing was recorded by the refused attempts beyond the one good connection.
    expect((await server.api(CONNECT, { cookie: person.cookie })).json.wallets).toHaveLength(1);
  });

  it("connects the wallet only to the identity its token names: a token made for another identity, or naming none, is refused", async () => {
    const victim = await personWithIdentity();
    const thief = await personWithIdentity();
    const w = newWallet();
    // Unused tokens of the victim's wallet that reached the thief: made for the victim's identity, or path-only.
    const victims = walletToken(w, victim.id.bapId);
    for (const scheme of ["bsm", "brc77"] as const) {
      const made = walletToken(w, victim.id.bapId, { scheme });
      problem(await connect(thief, thief.id, made), 401, "INVALID_AUTH_TOKEN");
      problem(await connect(thief, thief.id, pathOnlyWalletToken(w, { scheme })), 401, "INVALID_AUTH_TOKEN");
    }
    const refused = await connect(thief, thief.id, victims);
    problem(refused, 401, "INVALID_AUTH_TOKEN");
    expect(refused.json.detail).toContain(`{"bapId":"${thief.id.bapId}"}`);
    expect((await server.api(CONNECT, { cookie: thief.cookie })).json.wallets).toEqual([]);
    expect((await server.api("/api/wallet/nfts", { cookie: thief.cookie })).json.addresses).toEqual([]);
    // The refusals used nothing up: the victim's token connects the wallet to the identity it names.
    const own = await connect(victim, victim.id, victims);
    expect(own.status, own.text).toBe(200);
    expect(own.json).toMatchObject({ walletAddress: w.address, bapId: victim.id.bapId });
  });

  it("refuses the path-only token the published Sigma client documents unless WALLET_CONNECT_ALLOW_PATH_ONLY=true", async () => {
    const person = await personWithIdentity();
    problem(await connect(person, person.id, pathOnlyWalletToken(newWallet())), 401, "INVALID_AUTH_TOKEN");

    const lenient = await startTestServer({ WALLET_CONNECT_ALLOW_PATH_ONLY: "true" });
    try {
      const someone = await signedUpWithIdentity(lenient);
      const send = (authToken: string, bapId = someone.id.bapId) => lenient.api(CONNECT, { cookie: someone.cookie, body: { bapId, authToken, provider: "yours" } });
      const pathOnly = newWallet();
      const token = pathOnlyWalletToken(pathOnly, { scheme: "brc77" });
      const accepted = await send(token);
      expect(accepted.status, accepted.text).toBe(200);
      expect(accepted.json).toMatchObject({ walletAddress: pathOnly.address, bapId: someone.id.bapId });
      // Still once only, and the bound form is still checked for the identity it names.
      expect((await send(token)).status).toBe(401);
      const bound = newWallet();
      expect((await send(walletToken(bound, newIdentity().bapId))).status).toBe(401);
      expect((await send(walletToken(bound, someone.id.bapId))).status).toBe(200);
    } finally {
      await lenient.close();
    }
  });

  it("refuses another person's identity, callers without a session, bad bodies and cross-site posts", async () => {
    const owner = await personWithIdentity();
    const intruder = await personWithIdentity();
    const w = newWallet();
    problem(await connect(intruder, owner.id, walletToken(w, owner.id.bapId)), 404);
    problem(await server.api(CONNECT, { body: { bapId: owner.id.bapId, authToken: walletToken(w, owner.id.bapId), provider: "yours" } }), 401);
    problem(await server.api(CONNECT), 401);
    problem(await server.api("/api/wallet/nfts"), 401);
    problem(await server.api(`/api/wallet/address?bapId=${owner.id.bapId}`, { cookie: intruder.cookie }), 404);
    problem(await server.api(`${CONNECT}?bapId=${owner.id.bapId}`, { cookie: intruder.cookie }), 404);
    problem(await server.api(CONNECT, { cookie: owner.cookie, body: { bapId: owner.id.bapId, provider: "yours" } }), 400);
    problem(await server.api(CONNECT, { cookie: owner.cookie, body: { bapId: owner.id.bapId, authToken: walletToken(w, owner.id.bapId), provider: "bad name!" } }), 400);
    const crossSite = await server.api(CONNECT, { cookie: owner.cookie, headers: { origin: "https://evil.example" }, body: { bapId: owner.id.bapId, authToken: walletToken(w, owner.id.bapId), provider: "yours" } });
    problem(crossSite, 403);
    // The intruder's own connection of the same wallet key stays theirs; the owner's list is untouched.
    expect((await connect(intruder, intruder.id, walletToken(w, intruder.id.bapId))).status).toBe(200);
    expect((await server.api(CONNECT, { cookie: owner.cookie })).json.wallets).toEqual([]);
    problem(await server.api(`${CONNECT}?bapId=${intruder.id.bapId}&address=${w.address}`, { method: "DELETE", cookie: owner.cookie }), 404);
  });

  it("takes a session only: an OAuth access token of the same person is no substitute", async () => {
    const { person, tokens } = await fullCodeFlow(server, { scope: "openid profile" });
    const accessToken = tokens.json.access_token as string;
    expect(accessToken).toBeTruthy();
    const bearer = { authorization: `Bearer ${accessToken}` };
    problem(await server.api(CONNECT, { headers: bearer }), 401);
    problem(await server.api("/api/wallet/nfts", { headers: bearer }), 401);
    problem(await server.api("/api/auth/wallet/connect", { headers: bearer }), 401);
    problem(await server.api("/api/wallet/verify-ownership", { headers: bearer, body: { collection: "x" } }), 401);
    // The same person's session is.
    expect((await server.api(CONNECT, { cookie: person.cookie })).status).toBe(200);
  });

  it("sets a payment wallet only for yours and 1sat connections", async () => {
    const person = await personWithIdentity();
    const yours = await connected(person, "yours");
    const handcash = await connected(person, "handcash");
    const deposit = newWallet().address;
    const set = await server.api("/api/wallet/set-payment", { cookie: person.cookie, body: { bapId: person.id.bapId, walletAddress: yours.address, depositAddress: deposit } });
    expect(set.status).toBe(200);
    expect(set.json).toMatchObject({ success: true, paymentAddress: deposit, paymentProvider: "yours", walletAddress: yours.address });
    problem(await server.api("/api/wallet/set-payment", { cookie: person.cookie, body: { bapId: person.id.bapId, walletAddress: handcash.address } }), 400, "PAYMENT_PROVIDER_NOT_SUPPORTED");
    problem(await server.api("/api/wallet/set-payment", { cookie: person.cookie, body: { bapId: person.id.bapId, walletAddress: newWallet().address } }), 404, "WALLET_NOT_CONNECTED");
    const address = await server.api(`/api/wallet/address?bapId=${person.id.bapId}`, { cookie: person.cookie });
    expect(address.json).toMatchObject({ primaryAddress: yours.address, paymentAddress: deposit, paymentProvider: "yours" });
  });
});

describe("EVM connections", () => {
  const challenge = (person: Person, bapId = person.id.bapId) => server.api(`${CONNECT}/challenge`, { cookie: person.cookie, body: { bapId } });
  const evmConnect = (person: Person, body: Record<string, unknown>) => server.api(CONNECT, { cookie: person.cookie, body: { bapId: person.id.bapId, provider: "metamask", connectionMethod: "evm", ...body } });

  it("connects an EVM account that signed our challenge, once, and keeps it out of the ordinals lookups", async () => {
    const person = await personWithIdentity();
    const account = privateKeyToAccount(generatePrivateKey());
    const issued = await challenge(person);
    expect(issued.status).toBe(200);
    expect(issued.json).toMatchObject({ nonce: expect.any(String), message: expect.stringContaining(person.id.bapId), expiresAt: expect.any(String) });
    const signature = await account.signMessage({ message: issued.json.message });
    const res = await evmConnect(person, { address: account.address.toLowerCase(), message: issued.json.message, signature });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ success: true, walletAddress: account.address, connectionMethod: "evm", provider: "metamask", pubkey: expect.stringMatching(/^0x04[0-9a-f]{128}$/) });
    // Single use.
    problem(await evmConnect(person, { address: account.address, message: issued.json.message, signature }), 401, "INVALID_EVM_SIGNATURE");
    // An EVM account holds no 1Sat ordinals: the indexer is not asked about it.
    expect((await server.api("/api/wallet/nfts", { cookie: person.cookie })).json).toMatchObject({ addresses: [], totalNFTs: 0, incomplete: false });
    expect(indexer.hits(account.address)).toBe(0);
    // Addressed in any case, as EVM addresses often are.
    const removed = await server.api(`${CONNECT}?bapId=${person.id.bapId}&address=${account.address.toLowerCase()}`, { method: "DELETE", cookie: person.cookie });
    expect(removed.status).toBe(200);
  });

  it("refuses another key's signature, a tampered message and another person's challenge", async () => {
    const person = await personWithIdentity();
    const other = await personWithIdentity();
    const account = privateKeyToAccount(generatePrivateKey());
    const { message } = (await challenge(person)).json;
    const wrongKey = await privateKeyToAccount(generatePrivateKey()).signMessage({ message });
    problem(await evmConnect(person, { address: account.address, message, signature: wrongKey }), 401, "INVALID_EVM_SIGNATURE");
    const tampered = message.replace(person.id.bapId, other.id.bapId);
    problem(await evmConnect(person, { address: account.address, message: tampered, signature: await account.signMessage({ message: tampered }) }), 401, "INVALID_EVM_SIGNATURE");
    // A challenge issued to one person is no use to another, even for their own identity.
    const theirs = (await challenge(other)).json.message;
    problem(await evmConnect(person, { bapId: other.id.bapId, address: account.address, message: theirs, signature: await account.signMessage({ message: theirs }) }), 404);
    const mine = { address: account.address, message: theirs, signature: await account.signMessage({ message: theirs }) };
    problem(await evmConnect(person, mine), 401, "INVALID_EVM_SIGNATURE");
    problem(await challenge(person, other.id.bapId), 404);
    problem(await evmConnect(person, { address: "0x1234", message, signature: "0x00" }), 400);
  });
});

describe("Type-42 connections", () => {
  const INVOICE = "2-sigma wallet-main";
  /** The client's side, by the sdk: the member key's child for the "anyone" counterparty (1·G). */
  const derivedKey = (id: TestIdentity, invoice = INVOICE) => id.key.deriveChild(new PrivateKey(1).toPublicKey(), invoice);
  const type42Token = (key: PrivateKey, opts: { timestamp?: string } = {}) => signRequest(key, CONNECT, undefined, { scheme: "bsm", ...opts });
  const type42Connect = (person: Person, body: Record<string, unknown>) =>
    server.api(CONNECT, { cookie: person.cookie, body: { bapId: person.id.bapId, provider: "sigma", connectionMethod: "type42", identityPubKey: person.id.pubkey, ...body } });

  it("connects the key the identity key derives, the same key the sdk's wallet gives for counterparty anyone, once", async () => {
    const person = await personWithIdentity();
    const key = derivedKey(person.id);
    // The library's own wallet interface agrees on which key that is.
    const viaWallet = await new ProtoWallet(person.id.key).getPublicKey({ protocolID: [2, "sigma wallet"], keyID: "main", counterparty: "anyone", forSelf: true });
    expect(viaWallet.publicKey).toBe(key.toPublicKey().toString());
    const token = type42Token(key);
    const res = await type42Connect(person, { invoice: INVOICE, authToken: token });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ success: true, walletAddress: key.toPublicKey().toAddress(), pubkey: key.toPublicKey().toString(), provider: "sigma", connectionMethod: "type42", isPrimary: true });
    const listed = (await server.api(CONNECT, { cookie: person.cookie })).json.wallets;
    expect(listed).toEqual([expect.objectContaining({ address: key.toPublicKey().toAddress(), connectionMethod: "type42", provider: "sigma" })]);
    const row = await server.db.selectFrom("walletConnection").select(["identityPubkey"]).where("userId", "=", person.user.id).executeTakeFirstOrThrow();
    expect(row.identityPubkey).toBe(person.id.pubkey);
    // Replay of the same token: refused, nothing added.
    problem(await type42Connect(person, { invoice: INVOICE, authToken: token }), 401, "INVALID_AUTH_TOKEN");
    // The wallet interface's fields name the same invoice number; another key id is another wallet.
    const second = derivedKey(person.id, "2-sigma wallet-savings");
    const other = await type42Connect(person, { protocolID: [2, "sigma wallet"], keyID: "savings", authToken: type42Token(second) });
    expect(other.status).toBe(200);
    expect(other.json).toMatchObject({ walletAddress: second.toPublicKey().toAddress(), connectionMethod: "type42", isPrimary: false });
    expect((await server.api(CONNECT, { cookie: person.cookie })).json.wallets).toHaveLength(2);
  });

  it("refuses a token under another invoice, by the identity key itself, for another identity's key, stale, and bad invoice numbers", async () => {
    const person = await personWithIdentity();
    // Signed by the key of another invoice number than the one sent.
    problem(await type42Connect(person, { invoice: INVOICE, authToken: type42Token(derivedKey(person.id, "2-sigma wallet-other")) }), 401, "INVALID_AUTH_TOKEN");
    // Signed by the member key instead of the derived one.
    problem(await type42Connect(person, { invoice: INVOICE, authToken: type42Token(person.id.key) }), 401, "INVALID_AUTH_TOKEN");
    // Another identity's member key, with a token its derived key really signed: not this identity's key.
    const stranger = newIdentity();
    problem(await type42Connect(person, { identityPubKey: stranger.pubkey, invoice: INVOICE, authToken: type42Token(derivedKey(stranger)) }), 403, "NOT_MEMBER_KEY");
    // Another person's identity: 404 as everywhere, whatever the keys.
    const other = await personWithIdentity();
    problem(await type42Connect(person, { bapId: other.id.bapId, identityPubKey: other.id.pubkey, invoice: INVOICE, authToken: type42Token(derivedKey(other.id)) }), 404);
    // Stale.
    problem(await type42Connect(person, { invoice: INVOICE, authToken: type42Token(derivedKey(person.id), { timestamp: new Date(Date.now() - 10 * 60_000).toISOString() }) }), 401, "INVALID_AUTH_TOKEN");
    // Invoice numbers the sdk refuses, a non-canonical spelling, both forms or neither.
    for (const invoice of ["3-sigma wallet-main", "2-sig-main", "2-Sigma Wallet-main", "2-sigma  wallet-main", "2-sigma wallet-", "2-sigma wallet-a\nb", "sigma wallet"]) {
      problem(await type42Connect(person, { invoice, authToken: type42Token(derivedKey(person.id)) }), 400);
    }
    problem(await type42Connect(person, { invoice: INVOICE, protocolID: [2, "sigma wallet"], keyID: "main", authToken: type42Token(derivedKey(person.id)) }), 400);
    problem(await type42Connect(person, { authToken: type42Token(derivedKey(person.id)) }), 400);
    problem(await type42Connect(person, { protocolID: [2, "sigma wallet"], authToken: type42Token(derivedKey(person.id)) }), 400);
    problem(await type42Connect(person, { identityPubKey: undefined, invoice: INVOICE, authToken: type42Token(derivedKey(person.id)) }), 400);
    expect((await server.api(CONNECT, { cookie: person.cookie })).json.wallets).toEqual([]);
    // The good token, made now, still works: the refusals above used nothing of it.
    expect((await type42Connect(person, { invoice: INVOICE, authToken: type42Token(derivedKey(person.id)) })).status).toBe(200);
  });
});

describe("NFTs", () => {
  it("lists each wallet's NFTs (first 100 entries), caches them, and refreshes on request", async () => {
    const person = await personWithIdentity();
    const a = await connected(person);
    const b = await connected(person, "1sat");
    indexer.script(a.address, { kind: "ok", txos: [txo(a.address), txo(a.address), txo(a.address, { withOrigin: false })] });
    indexer.script(b.address, { kind: "ok", txos: [txo(b.address)] });
    const res = await server.api("/api/wallet/nfts", { cookie: person.cookie });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.json).toMatchObject({ totalNFTs: 3, addresses: [a.address, b.address], incomplete: false, failedWallets: [], limitPerAddress: 100 });
    expect(res.json.wallets.map((w: any) => [w.address, w.count])).toEqual([
      [a.address, 2],
      [b.address, 1],
    ]);
    expect(res.json.nfts[0]).toMatchObject({ txid: expect.stringMatching(/^[0-9a-f]{64}$/), vout: 0, satoshis: 1, owner: a.address, idx: 12, origin: { outpoint: expect.any(String), data: { insc: expect.any(Object) } } });
    expect(indexer.queries.at(-1)?.get("limit")).toBe("100");
    const hits = indexer.hits(a.address);
    expect((await server.api("/api/wallet/nfts", { cookie: person.cookie })).json.totalNFTs).toBe(3);
    expect(indexer.hits(a.address)).toBe(hits);
    indexer.script(a.address, { kind: "ok", txos: [] });
    const fresh = await server.api("/api/wallet/nfts?refresh=true", { cookie: person.cookie });
    expect(indexer.hits(a.address)).toBe(hits + 1);
    expect(fresh.json.totalNFTs).toBe(1);
  });

  it("says which wallets failed instead of answering none: error status, wrong shape, timeout; retries transient failures", async () => {
    const person = await personWithIdentity();
    const down = await connected(person);
    const garbled = await connected(person);
    const slow = await connected(person);
    const flaky = await connected(person);
    indexer.script(down.address, { kind: "status", status: 500 });
    indexer.script(garbled.address, { kind: "garbage" });
    indexer.script(slow.address, { kind: "slow", ms: 1500 });
    indexer.script(flaky.address, { kind: "flaky", failures: 1, txos: [txo(flaky.address)] });
    const started = Date.now();
    const res = await server.api("/api/wallet/nfts", { cookie: person.cookie });
    expect(res.status).toBe(200);
    expect(res.json.incomplete).toBe(true);
    expect(res.json.failedWallets.sort()).toEqual([down.address, garbled.address, slow.address].sort());
    const byAddress = Object.fromEntries(res.json.wallets.map((w: any) => [w.address, w]));
    expect(byAddress[down.address]).toMatchObject({ count: 0, error: expect.stringMatching(/500/) });
    expect(byAddress[garbled.address].error).toMatch(/unexpected shape/);
    expect(byAddress[slow.address].error).toMatch(/no answer within 300 ms/);
    expect(byAddress[flaky.address]).toMatchObject({ count: 1 });
    expect(byAddress[flaky.address].error).toBeUndefined();
    // Bounded retries: a first attempt and two more for a 5xx or a timeout; none for a bad body.
    expect(indexer.hits(down.address)).toBe(3);
    expect(indexer.hits(slow.address)).toBe(3);
    expect(indexer.hits(garbled.address)).toBe(1);
    expect(indexer.hits(flaky.address)).toBe(2);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe("ownership", () => {
  const origin = `${"ab".repeat(32)}_0`;

  it("counts an origin or a collection against minCount on the primary identity's wallets", async () => {
    const person = await personWithIdentity();
    const a = await connected(person);
    const b = await connected(person);
    indexer.script(a.address, { kind: "ok", txos: [txo(a.address, { origin }), txo(a.address, { collectionId: "col-1" })] });
    indexer.script(b.address, { kind: "ok", txos: [txo(b.address, { collectionId: "col-1" }), txo(b.address)] });
    const verify = (body: unknown) => server.api("/api/wallet/verify-ownership", { cookie: person.cookie, body });

    const byOrigin = await verify({ origin });
    expect(byOrigin.status).toBe(200);
    expect(byOrigin.json).toMatchObject({ owns: true, count: 1, minCount: 1, bapId: person.id.bapId, incomplete: false, failedWallets: [] });
    expect(byOrigin.json.nfts[0].origin.outpoint).toBe(origin);
    expect((await verify({ collection: "col-1", minCount: 2 })).json).toMatchObject({ owns: true, count: 2 });
    expect((await verify({ collection: "col-1", minCount: 3 })).json).toMatchObject({ owns: false, count: 2, incomplete: false });
    expect((await verify({ collection: "col-2" })).json).toMatchObject({ owns: false, count: 0, nfts: [] });
    problem(await verify({ origin, collection: "col-1" }), 400);
    problem(await verify({}), 400);
    problem(await verify({ origin, minCount: 0 }), 400);
    problem(await verify({ origin: "not-an-outpoint" }), 400);
  });

  it("answers an incomplete negative when a wallet could not be checked, and a definite one without wallets", async () => {
    const person = await personWithIdentity();
    const none = await server.api("/api/wallet/verify-ownership", { cookie: person.cookie, body: { origin } });
    expect(none.json).toMatchObject({ owns: false, count: 0, incomplete: false, message: expect.stringMatching(/No wallet/) });
    const a = await connected(person);
    const b = await connected(person);
    indexer.script(a.address, { kind: "ok", txos: [] });
    indexer.script(b.address, { kind: "status", status: 502 });
    const res = await server.api("/api/wallet/verify-ownership", { cookie: person.cookie, body: { origin } });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ owns: false, count: 0, incomplete: true, failedWallets: [b.address], message: expect.stringMatching(/could be checked/) });
  });
});

describe("the published Sigma client", () => {
  it("connects, lists, sets primary, lists NFTs, verifies ownership and disconnects under /api/auth/wallet", async () => {
    const person = await personWithIdentity();
    // The library is built against its own copy of better-fetch's types; at run time it is the same client.
    const plugin = sigmaClient() as unknown as BetterAuthClientPlugin;
    const client = createAuthClient({ baseURL: server.url, plugins: [plugin], fetchOptions: { headers: { cookie: person.cookie } } }) as unknown as SigmaActions;
    const a = newWallet();
    const b = newWallet();
    const origin = `${"cd".repeat(32)}_1`;
    indexer.script(a.address, { kind: "ok", txos: [txo(a.address, { origin })] });
    indexer.script(b.address, { kind: "ok", txos: [txo(b.address)] });

    const first = await client.wallet.connect(person.id.bapId, walletToken(a, person.id.bapId));
    expect(first).toMatchObject({ success: true, walletAddress: a.address, pubkey: a.pubkey });
    // better-fetch turns ISO timestamps into Dates on the way in.
    expect(Number.isNaN(new Date(first.connectedAt).getTime())).toBe(false);
    await client.wallet.connect(person.id.bapId, walletToken(b, person.id.bapId, { scheme: "brc77" }), "1sat");
    const listed = await client.wallet.getConnected(person.id.bapId);
    expect(listed.wallets.map((w) => [w.address, w.provider, w.isPrimary])).toEqual([
      [a.address, "yours", true],
      [b.address, "1sat", false],
    ]);
    expect(listed.wallets[0]).toMatchObject({ connectionMethod: "bitcoin-auth", connectedAt: expect.anything(), lastVerified: expect.anything() });
    expect((await client.wallet.getConnected()).wallets).toHaveLength(2);
    expect(await client.wallet.setPrimary(person.id.bapId, b.address)).toMatchObject({ success: true, primaryAddress: b.address });

    const nfts = await client.nft.list();
    expect(nfts).toMatchObject({ totalNFTs: 2, addresses: expect.arrayContaining([a.address, b.address]) });
    expect(nfts.wallets.map((w) => w.count).sort()).toEqual([1, 1]);
    expect((await client.nft.list(true)).totalNFTs).toBe(2);
    expect(await client.nft.verifyOwnership({ origin })).toMatchObject({ owns: true, count: 1 });
    expect(await client.nft.verifyOwnership({ origin, minCount: 2 })).toMatchObject({ owns: false, count: 1 });

    expect(await client.wallet.disconnect(person.id.bapId, a.address)).toMatchObject({ success: true, walletAddress: a.address });
    expect((await client.wallet.getConnected(person.id.bapId)).wallets.map((w) => w.address)).toEqual([b.address]);
    // A replayed token through the client is refused like any other.
    await expect(client.wallet.connect(person.id.bapId, "x|bsm|y|z|w")).rejects.toThrow();
  });
});

describe("the agent capability nft.verify_ownership", () => {
  it("runs the same check as the route, for the agent's owner", async () => {
    const { agentKit } = await import("../helpers/agents.js");
    const kit = agentKit(() => server);
    const person = await personWithIdentity();
    const w = await connected(person);
    const down = await connected(person);
    const origin = `${"ef".repeat(32)}_2`;
    indexer.script(w.address, { kind: "ok", txos: [txo(w.address, { origin }), txo(w.address, { collectionId: "club" })] });
    indexer.script(down.address, { kind: "status", status: 503 });
    const host = await kit.enrolledHost(person.cookie);
    const agent = await kit.approvedAgent(person.cookie, host, ["nft.verify_ownership"]);
    const execute = async (args: Record<string, unknown>) => kit.bearer("/api/auth/capability/execute", await kit.agentJwt(agent), { capability: "nft.verify_ownership", arguments: args });

    const owned = await execute({ origin });
    expect(owned.status).toBe(200);
    const viaRoute = await server.api("/api/wallet/verify-ownership", { cookie: person.cookie, body: { origin } });
    expect(owned.json.data).toMatchObject({ owns: true, count: 1, incomplete: true, failedWallets: [down.address] });
    expect(viaRoute.json).toMatchObject({ owns: true, count: 1, incomplete: true, failedWallets: [down.address] });
    const notEnough = await execute({ collection: "club", minCount: 2 });
    expect(notEnough.json.data).toMatchObject({ owns: false, count: 1, incomplete: true, message: expect.any(String) });
    const bad = await execute({ minCount: 0 });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toBe("invalid_arguments");
  });
});

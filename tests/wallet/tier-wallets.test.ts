import { randomBytes } from "node:crypto";
import { sigmaClient } from "@sigma-auth/better-auth-plugin/client";
import { createAuthClient, type BetterAuthClientPlugin } from "better-auth/client";
import { beforeAll, describe, expect, it } from "vitest";
import { walletTierOwnership } from "../../plugins/subscriptions/wallets.js";
import { newIdentity, registerIdentity } from "../helpers/bap.js";
import { txo } from "../helpers/ordinals.js";
import { personWithWallets, useBillingStack, type BillingStack } from "../helpers/billing.js";
import { signUp } from "../helpers/oauth.js";
import type { TestServer } from "../helpers/server.js";
import { completedCheckout, jobAfterPayment } from "../helpers/stripe.js";
import type { PaidTierId } from "../../plugins/subscriptions/tiers.js";
import { CONNECT, newWallet, walletToken, type Wallet } from "../helpers/wallet.js";

/**
 * The tier service and the mint queue on their default collaborators (server.ts): the tier
 * from the tier NFTs the user's connected wallets hold (items of TIER_NFT_PLUS, TIER_NFT_PRO
 * that this service minted, through the indexer stand-in), and mint jobs to the primary wallet
 * of the primary identity.
 */
const SECRET_KEY = "sk_test_tiers";
const WEBHOOK_SECRET = "whsec_test_tiers";
const PRICE = "price_protiers";
const collection = () => `${randomBytes(32).toString("hex")}_0`;
const PLUS = collection();
const PRO = collection();
type SigmaActions = ReturnType<ReturnType<typeof sigmaClient>["getActions"]>;

const stack = useBillingStack({
  secretKey: SECRET_KEY,
  webhookSecret: WEBHOOK_SECRET,
  collections: { plus: PLUS, pro: PRO },
  stripe: { prices: [PRICE] },
  env: { STRIPE_PRICE_PRO: PRICE },
});
let indexer: BillingStack["indexer"];
let stripe: BillingStack["stripe"];
let mint: BillingStack["mint"];
let server: TestServer;
beforeAll(() => void ({ indexer, stripe, mint, server } = stack));

const status = (cookie: string) => server.api("/api/subscription/status", { cookie });

/** Stripe reports the Checkout Session paid; the mint job it queues, once done. */
const paid = (session: { id: string }) => jobAfterPayment(server, WEBHOOK_SECRET, session, { timeoutMs: 15_000 });

/** `person` buys `tier` (to their primary wallet): the origin of the tier NFT this service minted. */
async function bought(person: { user: { id: string } }, tier: PaidTierId): Promise<string> {
  const job = await paid(completedCheckout(person.user.id, tier));
  expect(job.nftOrigin).toMatch(/^[0-9a-f]{64}_\d+$/);
  return job.nftOrigin as string;
}
const web = { client_name: "Tiered", redirect_uris: ["https://rp.example.com/cb"], token_endpoint_auth_method: "none" };

describe("the tier from the NFTs in connected wallets", () => {
  it("answers pro for a wallet holding the pro NFT, and lets the user own more than one OAuth client", async () => {
    const person = await personWithWallets(server, 2);
    const [plain, holder] = person.wallets as [Wallet, Wallet];
    const nft = txo(holder.address, { origin: await bought(person, "pro"), collectionId: PRO });
    indexer.script(plain.address, { kind: "ok", txos: [txo(plain.address)] });
    indexer.script(holder.address, { kind: "ok", txos: [txo(holder.address, { collectionId: collection() }), nft] });

    const res = await status(person.cookie);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ tier: "pro", isActive: true, nftOrigin: nft.origin!.outpoint, walletAddress: holder.address });
    expect(Date.parse(res.json.lastVerified)).toBeGreaterThan(Date.now() - 60_000);
    const session = await server.api("/api/auth/get-session", { cookie: person.cookie });
    expect(session.json.user.subscriptionTier).toBe("pro");

    for (let i = 0; i < 3; i++) expect((await server.api("/api/auth/oauth2/create-client", { cookie: person.cookie, body: web })).status, `client ${i + 1}`).toBeLessThan(300);
    expect(await server.db.selectFrom("oauthClient").select("id").where("userId", "=", person.user.id).execute()).toHaveLength(3);
  });

  it("gives the highest tier held, across wallets and identities", async () => {
    const person = await personWithWallets(server, 1);
    const second = newIdentity();
    expect((await registerIdentity(server, person.cookie, second)).status).toBe(201);
    const other = newWallet();
    expect((await server.api(CONNECT, { cookie: person.cookie, body: { bapId: second.bapId, authToken: walletToken(other, second.bapId), provider: "1sat" } })).status).toBe(200);
    const [plus, pro] = [await bought(person, "plus"), await bought(person, "pro")];
    indexer.script(person.wallets[0]!.address, { kind: "ok", txos: [txo(person.wallets[0]!.address, { origin: plus, collectionId: PLUS })] });
    indexer.script(other.address, { kind: "ok", txos: [txo(other.address, { origin: pro, collectionId: PRO })] });
    expect((await status(person.cookie)).json).toMatchObject({ tier: "pro", walletAddress: other.address });
  });

  it("answers plus for the plus NFT, and free without a tier NFT or a wallet", async () => {
    const plus = await personWithWallets(server, 1);
    indexer.script(plus.wallets[0]!.address, { kind: "ok", txos: [txo(plus.wallets[0]!.address, { origin: await bought(plus, "plus"), collectionId: PLUS })] });
    expect((await status(plus.cookie)).json).toMatchObject({ tier: "plus", walletAddress: plus.wallets[0]!.address });

    const none = await personWithWallets(server, 1);
    indexer.script(none.wallets[0]!.address, { kind: "ok", txos: [txo(none.wallets[0]!.address)] });
    expect((await status(none.cookie)).json).toEqual({ tier: "free", isActive: true });
    const walletless = await signUp(server);
    expect((await status(walletless.cookie)).json).toEqual({ tier: "free", isActive: true });
  });

  it("answers 503, not free, when the indexer fails and nothing was verified before; an NFT found elsewhere still counts", async () => {
    const person = await personWithWallets(server, 1);
    indexer.script(person.wallets[0]!.address, { kind: "status", status: 503 });
    const res = await status(person.cookie);
    expect(res.status).toBe(503);
    expect(res.json.code).toBe("OWNERSHIP_UNAVAILABLE");

    // The pro NFT in a wallet that answered is proof enough, whatever another wallet did.
    const mixed = await personWithWallets(server, 2);
    indexer.script(mixed.wallets[0]!.address, { kind: "status", status: 404 });
    indexer.script(mixed.wallets[1]!.address, { kind: "ok", txos: [txo(mixed.wallets[1]!.address, { origin: await bought(mixed, "pro"), collectionId: PRO })] });
    expect((await status(mixed.cookie)).json).toMatchObject({ tier: "pro", walletAddress: mixed.wallets[1]!.address });
  });

  it("answers through the published Sigma client's subscription status call", async () => {
    const person = await personWithWallets(server, 1);
    indexer.script(person.wallets[0]!.address, { kind: "ok", txos: [txo(person.wallets[0]!.address, { origin: await bought(person, "plus"), collectionId: PLUS })] });
    // The library is built against its own copy of better-fetch's types; at run time it is the same client.
    const plugin = sigmaClient() as unknown as BetterAuthClientPlugin;
    const client = createAuthClient({ baseURL: server.url, plugins: [plugin], fetchOptions: { headers: { cookie: person.cookie } } }) as unknown as SigmaActions;
    const got = await client.subscription.getStatus();
    expect(got).toMatchObject({ tier: "plus", isActive: true, walletAddress: person.wallets[0]!.address });
    expect(client.subscription.hasTier(got.tier, "plus")).toBe(true);
    expect(client.subscription.hasTier(got.tier, "pro")).toBe(false);
    const anonymous = createAuthClient({ baseURL: server.url, plugins: [plugin] }) as unknown as SigmaActions;
    await expect(anonymous.subscription.getStatus()).rejects.toThrow();
  });

  it("gives no tier for a look-alike: an ordinal whose own metadata names the tier's collection but that this service never minted", async () => {
    const person = await personWithWallets(server, 1);
    const w = person.wallets[0]!;
    // Self-inscribed items claiming membership: the indexer reports their metadata truthfully.
    indexer.script(w.address, { kind: "ok", txos: [txo(w.address, { collectionId: PRO }), txo(w.address, { collectionId: PLUS })] });

    const res = await status(person.cookie);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({ tier: "free", isActive: true });
    const session = await server.api("/api/auth/get-session", { cookie: person.cookie });
    expect(session.json.user.subscriptionTier).toBe("free");
    expect(session.json.session.subscriptionTier).toBe("free");
    // The free tier's one OAuth client, and no second.
    expect((await server.api("/api/auth/oauth2/create-client", { cookie: person.cookie, body: web })).status).toBeLessThan(300);
    const refused = await server.api("/api/auth/oauth2/create-client", { cookie: person.cookie, body: web });
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ code: "CLIENT_LIMIT_REACHED", tier: "free", limit: 1 });

    // Beside a wallet the indexer could not read, a look-alike settles nothing: 503, not pro.
    const unsure = await personWithWallets(server, 2);
    indexer.script(unsure.wallets[0]!.address, { kind: "ok", txos: [txo(unsure.wallets[0]!.address, { collectionId: PRO })] });
    indexer.script(unsure.wallets[1]!.address, { kind: "status", status: 404 });
    const unknown = await status(unsure.cookie);
    expect(unknown.status).toBe(503);
    expect(unknown.json.code).toBe("OWNERSHIP_UNAVAILABLE");
  });

  it("follows the NFT this service minted to whoever holds it now, and only for the tier it was minted for", async () => {
    const buyer = await personWithWallets(server, 1);
    const origin = await bought(buyer, "plus");
    // The buyer passed it on: it sits at a new outpoint in another person's wallet, same origin.
    const holder = await personWithWallets(server, 1);
    indexer.script(buyer.wallets[0]!.address, { kind: "ok", txos: [] });
    indexer.script(holder.wallets[0]!.address, { kind: "ok", txos: [txo(holder.wallets[0]!.address, { origin, collectionId: PLUS })] });
    expect((await status(holder.cookie)).json).toMatchObject({ tier: "plus", nftOrigin: origin, walletAddress: holder.wallets[0]!.address });
    expect((await status(buyer.cookie)).json).toEqual({ tier: "free", isActive: true });

    // A plus NFT we minted, carrying pro collection metadata, is no pro NFT.
    const other = await personWithWallets(server, 1);
    indexer.script(other.wallets[0]!.address, { kind: "ok", txos: [txo(other.wallets[0]!.address, { origin: await bought(other, "plus"), collectionId: PRO })] });
    expect((await status(other.cookie)).json).toEqual({ tier: "free", isActive: true });
  });

  it("asks the indexer nothing for a tier with no NFT configured: everyone is free", async () => {
    let asked = 0;
    const checker = walletTierOwnership({
      db: server.db,
      indexer: {
        nftsOf: async () => {
          asked++;
          return [];
        },
      },
      collections: { plus: undefined, pro: undefined },
    });
    const person = await personWithWallets(server, 1);
    expect(await checker.ownsTierNft(person.user.id, "pro")).toBeNull();
    expect(await checker.ownsTierNft(person.user.id, "plus")).toBeNull();
    expect(asked).toBe(0);
  });
});

describe("the mint after checkout", () => {
  it("goes to the primary wallet of the buyer's primary identity", async () => {
    const person = await personWithWallets(server, 2);
    const [first, chosen] = person.wallets as [Wallet, Wallet];
    expect((await server.api("/api/wallet/set-primary", { cookie: person.cookie, body: { bapId: person.id.bapId, walletAddress: chosen.address } })).status).toBe(200);
    // A second identity, not the primary one, with its own (primary) wallet: not where the NFT goes.
    const second = newIdentity();
    expect((await registerIdentity(server, person.cookie, second)).status).toBe(201);
    expect((await server.api(CONNECT, { cookie: person.cookie, body: { bapId: second.bapId, authToken: walletToken(newWallet(), second.bapId), provider: "yours" } })).status).toBe(200);

    const started = await server.api("/api/subscription/checkout", { cookie: person.cookie, body: { tierId: "pro", interval: "monthly" } });
    expect(started.status, started.text).toBe(200);
    const sent = stripe.checkouts.at(-1)!;
    expect(sent.client_reference_id).toBe(person.user.id);
    // Stripe's answer once the buyer paid: the session the SDK created, completed.
    const job = await paid(completedCheckout(person.user.id, "pro", { id: started.json.url.split("/").at(-1) }));
    expect(job).toMatchObject({ status: "done", walletAddress: chosen.address, tier: "pro" });
    expect(job.walletAddress).not.toBe(first.address);
    expect(mint.requests.filter((r) => r.body.paymentId === job.paymentId).map((r) => r.body.walletAddress)).toEqual([chosen.address]);
  });
});

import { afterAll, beforeAll, expect } from "vitest";
import type { PaidTierId } from "../../plugins/subscriptions/tiers.js";
import { newIdentity, registerIdentity } from "./bap.js";
import { signUp } from "./oauth.js";
import { startIndexer } from "./ordinals.js";
import { startTestServer, type TestServer } from "./server.js";
import { startMintStandIn, startStripeStandIn } from "./stripe.js";
import { CONNECT, newWallet, walletToken, type Wallet } from "./wallet.js";

/**
 * The paid tiers on their default collaborators (server.ts): a server whose tier is the tier
 * NFTs its users' connected wallets hold (TIER_NFT_PLUS / TIER_NFT_PRO, through the indexer
 * stand-in), paid through Stripe's real SDK against the Stripe stand-in, minted by the mint
 * stand-in. Started before the file's tests and closed after them.
 */
export interface BillingStack {
  indexer: Awaited<ReturnType<typeof startIndexer>>;
  stripe: Awaited<ReturnType<typeof startStripeStandIn>>;
  mint: Awaited<ReturnType<typeof startMintStandIn>>;
  server: TestServer;
}

export interface BillingOptions {
  secretKey: string;
  webhookSecret: string;
  /** The tier NFT collections (TIER_NFT_PLUS, TIER_NFT_PRO). */
  collections: Record<PaidTierId, string>;
  /** What the Stripe stand-in sells, besides its secret key. */
  stripe: Omit<Parameters<typeof startStripeStandIn>[0], "secretKey">;
  /** The price settings (STRIPE_PRICE_*) and anything else of the file's own. */
  env: Record<string, string>;
}

/** The stack for this file: its parts are set once `beforeAll` has run. */
export function useBillingStack(options: BillingOptions): BillingStack {
  const stack = {} as BillingStack;
  beforeAll(async () => {
    stack.indexer = await startIndexer();
    stack.stripe = await startStripeStandIn({ secretKey: options.secretKey, ...options.stripe });
    stack.mint = await startMintStandIn({ failFirst: 0 });
    stack.server = await startTestServer(
      {
        ORDINALS_API_URL: stack.indexer.url,
        ORDINALS_API_TIMEOUT: "300",
        OUTBOUND_ALLOW_PRIVATE: "true",
        TIER_NFT_PLUS: options.collections.plus,
        TIER_NFT_PRO: options.collections.pro,
        STRIPE_SECRET_KEY: options.secretKey,
        STRIPE_WEBHOOK_SECRET: options.webhookSecret,
        STRIPE_API_BASE_URL: stack.stripe.url,
        MINT_SERVICE_URL: stack.mint.url,
        ...options.env,
      },
      // Only the worker's pace is set; ownership and the buyer's wallet are the defaults under test.
      // A slow poll: on PostgreSQL other files' servers share the queue, and a webhook wakes ours.
      { subscriptions: { worker: { pollMs: 1000, waitMs: 100 } } },
    );
  });
  afterAll(async () => {
    await stack.server?.close();
    await stack.indexer?.close();
    await stack.stripe?.close();
    await stack.mint?.close();
  });
  return stack;
}

/** A signed-in person with a registered identity and `count` wallets connected to it. */
export async function personWithWallets(server: TestServer, count: number) {
  const person = await signUp(server);
  const id = newIdentity();
  expect((await registerIdentity(server, person.cookie, id)).status).toBe(201);
  const wallets: Wallet[] = [];
  for (let i = 0; i < count; i++) {
    const w = newWallet();
    const res = await server.api(CONNECT, { cookie: person.cookie, body: { bapId: id.bapId, authToken: walletToken(w, id.bapId), provider: "yours" } });
    expect(res.status, res.text).toBe(200);
    wallets.push(w);
  }
  return { ...person, id, wallets };
}

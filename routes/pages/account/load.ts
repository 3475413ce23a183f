import type { SessionWithUser } from "../../session.js";
import type { BrowserAsset } from "../assets.js";
import type { PageDeps } from "../page-env.js";
import { listBapIdentities, listLinkedAccounts } from "../../../plugins/accounts/store.js";
import { isTierId } from "../../../plugins/subscriptions/tiers.js";
import { findCustomerOf } from "../../../plugins/subscriptions/payment-store.js";
import { userNfts } from "../../../plugins/wallet/ownership.js";
import { listConnections } from "../../../plugins/wallet/store.js";
import { offersAbove, type SubscriptionView } from "./subscription.js";
import type { NftsView } from "./wallets.js";
import { findRecordedTier } from "../../../plugins/core-store/users.js";

/**
 * What an account page's sections read. A page reads only what its own sections show (each
 * section's view asks for its data, sections.tsx); a read two sections share (the linked
 * accounts, the BAP identities, the wallets) happens once per page through `SectionContext.once`.
 */
export interface SectionContext {
  deps: PageDeps;
  session: SessionWithUser;
  /** `read`'s answer for the signed-in person, read once however many sections of the page ask. */
  once<T>(read: (deps: PageDeps, userId: string) => Promise<T>): Promise<T>;
}

export function sectionContext(deps: PageDeps, session: SessionWithUser): SectionContext {
  const answers = new Map<unknown, Promise<unknown>>();
  return {
    deps,
    session,
    once<T>(read: (deps: PageDeps, userId: string) => Promise<T>): Promise<T> {
      if (!answers.has(read)) answers.set(read, read(deps, session.user.id));
      return answers.get(read) as Promise<T>;
    },
  };
}

/** Reads more than one section asks for (keys of `SectionContext.once`). */
export const linkedAccountsOf = (deps: PageDeps, userId: string) => listLinkedAccounts(deps.db, userId);
export const bapIdentitiesOf = (deps: PageDeps, userId: string) => listBapIdentities(deps.db, userId);
export const walletsOf = (deps: PageDeps, userId: string) => listConnections(deps.db, userId);

/**
 * How long the page waits for the NFT indexer (and the tier check that asks it). Past it the
 * page renders and says so; the answer still lands in their short caches for the next load.
 */
export const INDEXER_DEADLINE_MS = 2000;

/** `work`'s value, or "late" once `ms` have passed (the work goes on). */
function within<T>(work: Promise<T>, ms: number): Promise<T | "late"> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** The tier ownership says the person holds; when that cannot be told in time, the tier last recorded. */
export async function loadSubscription(deps: PageDeps, userId: string): Promise<SubscriptionView> {
  const { tiers, stripe, stripeSettings } = deps.billing;
  const [checked, customer] = await Promise.all([
    within(tiers.status(userId), INDEXER_DEADLINE_MS).catch((err: unknown) => {
      deps.logger?.warn("account page: tier check failed", { err, userId });
      return "late" as const;
    }),
    findCustomerOf(deps.db, userId),
  ]);
  let tier;
  if (checked === "late") {
    const recorded = await findRecordedTier(deps.db, userId);
    tier = isTierId(recorded) ? recorded : "free";
  } else tier = checked.tier;
  const lastVerified = checked !== "late" && checked.lastVerified ? new Date(checked.lastVerified) : null;
  const periodEnd = checked !== "late" && checked.periodEnd ? new Date(checked.periodEnd) : null;
  const billing = { periodEnd, renews: checked !== "late" && Boolean(checked.renews), hasBilling: Boolean(stripe && customer) };
  return { tier, lastVerified, unverified: checked === "late", paymentsOn: Boolean(stripe), offers: stripe ? offersAbove(tier, stripeSettings.prices) : [], billing };
}

/** The NFTs of the person's wallets, as far as the indexer answers within the deadline; null (no indexer call) without a wallet. */
export async function loadNfts(ctx: SectionContext): Promise<NftsView | null> {
  if (!(await ctx.once(walletsOf)).length) return null;
  return within(userNfts(ctx.deps.db, ctx.deps.billing.indexer, ctx.session.user.id), INDEXER_DEADLINE_MS);
}

/** A page script, or null (logged) when it could not be built: the page renders without that control. */
export function orNull(deps: PageDeps, name: string, script: Promise<BrowserAsset>): Promise<BrowserAsset | null> {
  return script.catch((err: unknown) => {
    deps.logger?.error(`${name} script build failed`, { err });
    return null;
  });
}

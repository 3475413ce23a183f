/**
 * The subscription tiers (spec, "Limits": subscription tiers; "States and transitions":
 * `free`, `plus`, `pro`). One table: prices, features and the limits we enforce. Amounts are
 * in US dollars; what a buyer is charged is the recurring Stripe price configured for the tier
 * (STRIPE_PRICE_*, billed each month or year), these figures are what the account page and the API show.
 */
export const TIER_IDS = ["free", "plus", "pro"] as const;
export type TierId = (typeof TIER_IDS)[number];
/** The tiers that can be bought (checkout's `tierId`). */
export const PAID_TIER_IDS = ["plus", "pro"] as const;
export type PaidTierId = (typeof PAID_TIER_IDS)[number];
export const INTERVALS = ["monthly", "annual"] as const;
export type Interval = (typeof INTERVALS)[number];

export interface Tier {
  id: TierId;
  name: string;
  price: { monthly: number; annual: number };
  features: readonly string[];
  /** OAuth clients one user may own; null: no limit. */
  maxOAuthClients: number | null;
}

export const TIERS: Readonly<Record<TierId, Tier>> = Object.freeze({
  free: { id: "free", name: "Free", price: { monthly: 0, annual: 0 }, features: ["basic authentication", "1 OAuth client"], maxOAuthClients: 1 },
  plus: {
    id: "plus",
    name: "Plus",
    price: { monthly: 10, annual: 100 },
    features: ["10 OAuth clients", "custom branding", "e-mail support"],
    maxOAuthClients: 10,
  },
  pro: {
    id: "pro",
    name: "Pro",
    price: { monthly: 50, annual: 500 },
    features: ["unlimited clients", "analytics", "priority support", "white-label"],
    maxOAuthClients: null,
  },
});

/** Highest first: the tier a user holds is the highest one whose NFT they own. */
export const PAID_TIERS_HIGHEST_FIRST: readonly PaidTierId[] = ["pro", "plus"];

export function isTierId(value: unknown): value is TierId {
  return typeof value === "string" && (TIER_IDS as readonly string[]).includes(value);
}

import { Hono } from "hono";
import * as v from "valibot";
import { ProblemError } from "../../../lib/errors.js";
import { startCheckout } from "../../../plugins/subscriptions/checkout.js";
import { INTERVALS, PAID_TIER_IDS, TIERS, type Interval, type PaidTierId, type TierId } from "../../../plugins/subscriptions/tiers.js";
import { readForm } from "../form-replay.js";
import type { PageContext, PageEnv } from "../page-env.js";
import { redirectWith } from "../render.js";
import { PostButton } from "./account-table.js";
import { Section, When } from "./format.js";
import { accountForm, backWithError } from "./outcome.js";
import { BillingPart, type BillingView } from "./billing.js";

/** What the tier section shows: the tier NFT ownership says the person holds, and what can be bought. */
export interface SubscriptionView {
  tier: TierId;
  /** When ownership of the tier NFT was last checked; only with a paid tier. */
  lastVerified: Date | null;
  /** The ownership check failed or was late: the tier shown is the one last recorded. */
  unverified: boolean;
  /** The upgrades with a configured price, per tier: which intervals can be bought. */
  offers: Array<{ tierId: PaidTierId; intervals: Interval[] }>;
  /** Whether this server takes payments at all (STRIPE_SECRET_KEY). */
  paymentsOn: boolean;
  /** The paid period and the "Manage billing" button (./billing.tsx). */
  billing: BillingView;
}

const PAID_ORDER: readonly TierId[] = ["free", ...PAID_TIER_IDS];

/** The paid tiers above `tier` that have at least one configured price. */
export function offersAbove(tier: TierId, prices: Record<PaidTierId, Record<Interval, string | undefined>>): SubscriptionView["offers"] {
  return PAID_TIER_IDS.filter((id) => PAID_ORDER.indexOf(id) > PAID_ORDER.indexOf(tier))
    .map((tierId) => ({ tierId, intervals: INTERVALS.filter((i) => Boolean(prices[tierId][i])) }))
    .filter((o) => o.intervals.length > 0);
}

const dollars = (n: number) => `$${n}`;
const PER: Record<Interval, string> = { monthly: "a month", annual: "a year" };

/** The person's tier and its features, and the buttons that start a Stripe Checkout for a higher one. */
export function SubscriptionSection(props: { view: SubscriptionView }) {
  const { tier, lastVerified, unverified, offers, paymentsOn } = props.view;
  const current = TIERS[tier];
  return (
    <Section id="subscription" title="Your plan">
      <p>
        Your plan: <strong data-tier={tier}>{current.name}</strong>
        {lastVerified ? (
          <span class="muted">
            {" "}
            (checked <When at={lastVerified} />)
          </span>
        ) : null}
      </p>
      <BillingPart view={props.view.billing} />
      {unverified ? <p class="muted">We could not check your plan's NFT just now, so this is the plan we last saw. Reload the page in a minute to check again.</p> : null}
      <p>It includes:</p>
      <ul>
        {current.features.map((f) => (
          <li>{f}</li>
        ))}
      </ul>
      {tier !== "free" ? <p class="muted">Your plan comes from the plan NFT in one of your connected wallets. Keep that wallet connected to keep the plan; it counts while its period is paid.</p> : null}
      {offers.length ? (
        <>
          <h3>Upgrade</h3>
          <p class="muted">You pay on Stripe's page, then come back here. Your plan NFT is sent to your primary wallet, so connect a wallet first.</p>
          {offers.map(({ tierId, intervals }) => {
            const t = TIERS[tierId];
            return (
              <div data-offer={tierId}>
                <p>
                  <strong>{t.name}</strong>: {t.features.join(", ")}.
                </p>
                {intervals.map((interval) => (
                  <PostButton
                    action="/account/subscription/checkout"
                    fields={{ tier: tierId, interval }}
                    text={`Upgrade to ${t.name}, ${dollars(t.price[interval])} ${PER[interval]}`}
                    primary={interval === "monthly"}
                  />
                ))}
              </div>
            );
          })}
        </>
      ) : tier === "free" && !paymentsOn ? (
        <p class="muted">This server does not take payments, so the plan cannot be upgraded here.</p>
      ) : null}
    </Section>
  );
}

const CheckoutForm = v.object({ tier: v.picklist(PAID_TIER_IDS), interval: v.picklist(INTERVALS) });

/**
 * An upgrade button: the same Checkout as POST /api/subscription/checkout, then on to Stripe's
 * hosted page (303). Stripe sends the person back to /account?subscription=success or =cancelled.
 */
async function checkout(c: PageContext) {
  const form = v.safeParse(CheckoutForm, await readForm(c));
  if (!form.success) return backWithError(null, "subscription", "INVALID_INPUT");
  const { page, session } = c.var;
  const deps = { stripe: page.billing.stripe, settings: page.billing.stripeSettings, authUrl: page.authUrl, db: page.db, logger: page.logger };
  try {
    const { url } = await startCheckout(deps, session.user, form.output.tier, form.output.interval);
    return redirectWith(null, url);
  } catch (err) {
    if (!(err instanceof ProblemError)) throw err;
    return backWithError(null, "subscription", err.extra.code ?? "CHECKOUT_FAILED");
  }
}

/** Mounted at /account. */
export const subscriptionRoutes = new Hono<PageEnv>().post("/subscription/checkout", ...accountForm, checkout);

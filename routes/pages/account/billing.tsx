import { Hono } from "hono";
import { ProblemError } from "../../../lib/errors.js";
import { openPortal } from "../../../plugins/subscriptions/portal.js";
import type { PageContext, PageEnv } from "../page-env.js";
import { redirectWith } from "../render.js";
import { PostButton } from "./account-table.js";
import { When } from "./format.js";
import { accountForm, backWithError } from "./outcome.js";

/** The period of the plan shown and whether there is billing to manage at Stripe. */
export interface BillingView {
  /** When the paid period ends; null on the free plan (or a period the checker does not know). */
  periodEnd: Date | null;
  /** Whether the subscription renews at `periodEnd`. */
  renews: boolean;
  /** The person has paid through Stripe here: the customer portal has something to show. */
  hasBilling: boolean;
}

/**
 * Part of the plan section (./subscription.tsx): until when the plan is paid, whether it renews,
 * and "Manage billing", which opens Stripe's customer portal to cancel or change the plan or card.
 */
export function BillingPart(props: { view: BillingView }) {
  const { periodEnd, renews, hasBilling } = props.view;
  return (
    <div id="billing">
      {periodEnd ? (
        <p>
          {renews ? "Paid until " : "Ends "}
          <When at={periodEnd} />
          {renews ? "; it renews then unless you cancel." : ", and is not renewed: it falls back to Free then. Your clients and settings are kept."}
        </p>
      ) : null}
      {hasBilling ? (
        <>
          <PostButton action="/account/billing/portal" text="Manage billing" />
          <p class="muted">Cancel, change the plan or the card on Stripe's page, then come back here.</p>
        </>
      ) : null}
    </div>
  );
}

/** "Manage billing": the same portal session as POST /api/subscription/portal, then on to Stripe's page (303). */
async function portal(c: PageContext) {
  const { page, session } = c.var;
  try {
    const { url } = await openPortal({ stripe: page.billing.stripe, db: page.db, authUrl: page.authUrl, logger: page.logger }, session.user.id);
    return redirectWith(null, url);
  } catch (err) {
    if (!(err instanceof ProblemError)) throw err;
    return backWithError(null, "subscription", err.extra.code ?? "PORTAL_FAILED");
  }
}

/** Mounted at /account. */
export const billingRoutes = new Hono<PageEnv>().post("/billing/portal", ...accountForm, portal);

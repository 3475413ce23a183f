import type { Context, MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import type { Kysely } from "kysely";
import type Stripe from "stripe";
import type { Auth } from "../../auth.config.js";
import type { Config } from "../../lib/env.js";
import type { Logger } from "../../lib/logger.js";
import type { Mailer } from "../../lib/mailer.js";
import type { Limiter } from "../../lib/rate-limit.js";
import type { SignInProvider } from "../../lib/social-providers.js";
import type { TierService } from "../../plugins/subscriptions/ownership.js";
import type { OrdinalsIndexer } from "../../plugins/wallet/ordinals.js";
import { sameOriginOnly, type AppEnv } from "../middleware.js";
import { findSession } from "../session.js";
import { refuseForeignForm } from "./error-page.js";
import { redirectWith } from "./render.js";
import { signInThenBack } from "./return-to.js";
import type { Database } from "../../lib/db/tables.js";

/** What the pages need from the composition root, set once per request at the mount. */
export interface PageDeps {
  auth: Auth;
  db: Kysely<Database>;
  authUrl: string;
  /** Key sign-in's route name (SIGMA_SERVICE_NAME). @default "sigma" */
  sigmaServiceName?: string;
  logger?: Logger;
  /** Social providers offered as "Continue with <Name>" (configured ones only). */
  socialProviders: readonly SignInProvider[];
  /** The account page's tier, upgrade and NFT sections: the same services the wallet and subscription routes use. */
  billing: PageBilling;
  /** The account page's Contact support form (routes/pages/account/support.tsx). */
  support: PageSupport;
}

export interface PageSupport {
  /** SUPPORT_EMAIL, or null: no form, the page says so. */
  email: string | null;
  mailer: Mailer;
  /** lib/limits.ts `supportMessage`, per person; null when limits are off. */
  limiter: Limiter | null;
}

export interface PageBilling {
  tiers: TierService;
  /** null: STRIPE_SECRET_KEY is not set. */
  stripe: Stripe | null;
  stripeSettings: Config["stripe"];
  indexer: OrdinalsIndexer;
}

/** The pages' typed context: the shared one (request id, session) and the page dependencies. */
export interface PageEnv extends AppEnv {
  Variables: AppEnv["Variables"] & { page: PageDeps };
}

export type PageContext = Context<PageEnv>;

/** At the mount: every page handler reads its dependencies as `c.var.page`. */
export function providePageDeps(deps: PageDeps): MiddlewareHandler<PageEnv> {
  return createMiddleware<PageEnv>(async (c, next) => {
    c.set("page", deps);
    await next();
  });
}

/**
 * Form posts from our own pages only: routes/middleware.ts `sameOriginOnly`, refusing with the
 * 403 error page. Built per request because the route tables are module-level and `authUrl`
 * is configuration the mount brings.
 */
export const ownPagesOnly: MiddlewareHandler<PageEnv> = (c, next) => sameOriginOnly<PageEnv>(c.var.page.authUrl, refuseForeignForm)(c, next);

/**
 * The session when there is one (`c.get("session")`), for pages that also answer anonymous
 * visitors: routes/middleware.ts `maybeSignedIn`, with the `auth` the mount brings.
 */
export const withSession = createMiddleware<PageEnv>(async (c, next) => {
  const session = await findSession(c.var.page.auth, c.req.raw.headers);
  if (session) c.set("session", session);
  await next();
});

/**
 * Pages that need a session: without one, to the sign-in page and back to `returnTo(c)` (null:
 * the plain sign-in page). A form post's redirect carries no-store like every form answer.
 */
export function signInFirst(returnTo: (c: PageContext) => string | null): MiddlewareHandler<PageEnv> {
  return createMiddleware<PageEnv>(async (c, next) => {
    const session = await findSession(c.var.page.auth, c.req.raw.headers);
    if (session) {
      c.set("session", session);
      return next();
    }
    const back = returnTo(c);
    const location = back ? signInThenBack(back) : "/sign-in";
    return c.req.method === "GET" ? c.redirect(location, 303) : redirectWith(null, location);
  });
}

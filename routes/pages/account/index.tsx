import { Hono } from "hono";
import { signInFirst, type PageContext, type PageEnv } from "../page-env.js";
import { html } from "../render.js";
import { AccountPage } from "./account-page.js";
import { agentAccountRoutes } from "./agents.js";
import { appRoutes } from "./apps.js";
import { brandingRoutes } from "./branding.js";
import { identityRoutes } from "./identities.js";
import { linkedAccountRoutes } from "./linked-accounts.js";
import { loadAccountView } from "./load.js";
import { organizationRoutes } from "./organizations.js";
import { ACCOUNT_PATH } from "./outcome.js";
import { passkeyRoutes } from "./passkeys.js";
import { profileRoutes } from "./profile.js";
import { sessionRoutes } from "./sessions.js";
import { subscriptionRoutes } from "./subscription.js";
import { walletRoutes } from "./wallets.js";
import { twoFactorRoutes } from "./two-factor.js";

/**
 * The account page (GET /account, and GET / for a signed-in person) and the forms on it, one
 * file per section. Server-rendered; every form works without JavaScript except adding a
 * passkey (WebAuthn is a browser API). Each change goes through better-auth's own endpoint via
 * `callAuth`, so its session, freshness, origin and rate-limit rules hold exactly as for an API
 * client; every form is guarded by `accountForm` (outcome.ts).
 */
async function showAccount(c: PageContext) {
  const view = await loadAccountView(c.var.page, c.var.session, new URL(c.req.url).searchParams);
  return html(c, <AccountPage {...view} />);
}

/** Signed out: / is the plain sign-in page; /account comes back here afterwards. */
const signedInToView = signInFirst((c) => (c.req.path === "/" ? null : ACCOUNT_PATH));

export const accountRoutes = new Hono<PageEnv>()
  .get("/", signedInToView, showAccount)
  .get(ACCOUNT_PATH, signedInToView, showAccount)
  .route(ACCOUNT_PATH, profileRoutes)
  .route(ACCOUNT_PATH, sessionRoutes)
  .route(ACCOUNT_PATH, linkedAccountRoutes)
  .route(ACCOUNT_PATH, passkeyRoutes)
  .route(ACCOUNT_PATH, identityRoutes)
  .route(ACCOUNT_PATH, appRoutes)
  .route(ACCOUNT_PATH, subscriptionRoutes)
  .route(ACCOUNT_PATH, brandingRoutes)
  .route(ACCOUNT_PATH, walletRoutes)
  .route(`${ACCOUNT_PATH}/two-factor`, twoFactorRoutes)
  .route(`${ACCOUNT_PATH}/organizations`, organizationRoutes)
  // AGENT AUTH HOOK: pause/revoke forms of the agents section post here (./agents.tsx).
  .route(`${ACCOUNT_PATH}/agents`, agentAccountRoutes);

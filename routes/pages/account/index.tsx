import { Hono } from "hono";
import { signInFirst, type PageContext, type PageEnv } from "../page-env.js";
import { html, redirectWith } from "../render.js";
import { AccountOverview, AccountPage, type AccountFrame } from "./account-page.js";
import { agentAccountRoutes } from "./agents.js";
import { appRoutes } from "./apps.js";
import { identityRoutes } from "./identities.js";
import { linkedAccountRoutes } from "./linked-accounts.js";
import { sectionContext } from "./load.js";
import { errorWords, noticeWords, sectionOfNotice, subscriptionWords } from "./messages.js";
import { organizationRoutes } from "./organizations.js";
import { ACCOUNT_PAGES, ACCOUNT_PATH, pageOfSection, type AccountPageInfo } from "./pages.js";
import { passkeyRoutes } from "./passkeys.js";
import { profileRoutes } from "./profile.js";
import { shownSections } from "./sections.js";
import { sessionRoutes } from "./sessions.js";
import { subscriptionRoutes } from "./subscription.js";
import { billingRoutes } from "./billing.js";
import { walletRoutes } from "./wallets.js";
import { twoFactorRoutes } from "./two-factor.js";

/**
 * The account area: an overview (GET /account, and GET / for a signed-in person) and the pages
 * of pages.ts, each showing its sections, and the forms on them, one file per section.
 * Server-rendered; every form works without JavaScript except adding a passkey (WebAuthn is a
 * browser API). Each change goes through better-auth's own endpoint via `callAuth`, so its
 * session, freshness, origin and rate-limit rules hold exactly as for an API client; every
 * form is guarded by `accountForm` (outcome.ts) and comes back to the page it was posted from.
 */
function frameOf(c: PageContext): AccountFrame {
  const search = new URL(c.req.url).searchParams;
  return {
    email: c.var.session.user.email,
    notice: noticeWords(search.get("notice")) ?? subscriptionWords(search.get("subscription")),
    error: errorWords(c.var.page.auth, search.get("error")),
  };
}

/**
 * The overview. A link from before the account area had pages (`/account?notice=...`,
 * Stripe's `/account?subscription=...`) goes on to the page its outcome belongs to; the
 * fragment it may carry is the browser's and stays with it.
 */
function showOverview(c: PageContext) {
  const search = new URL(c.req.url).search;
  const notice = sectionOfNotice(c.req.query("notice"));
  if (c.req.query("subscription") !== undefined) return redirectWith(null, `${pageOfSection("subscription")}${search}`);
  if (notice) return redirectWith(null, `${pageOfSection(notice)}${search}`);
  return html(c, <AccountOverview {...frameOf(c)} />);
}

/** One account page: its sections read and rendered side by side, nothing else read. */
function showPage(page: AccountPageInfo) {
  return async (c: PageContext) => {
    const ctx = sectionContext(c.var.page, c.var.session);
    const sections = await Promise.all(shownSections(page.sections).map(([, , view]) => view(ctx)));
    return html(c, <AccountPage {...frameOf(c)} page={page} sections={sections} />);
  };
}

/** Signed out: / is the plain sign-in page; an account page comes back to itself afterwards. */
const signedInToView = signInFirst((c) => (c.req.path === "/" ? null : c.req.path));

const pages = ACCOUNT_PAGES.reduce((app, page) => app.get(page.path, signedInToView, showPage(page)), new Hono<PageEnv>());

export const accountRoutes = new Hono<PageEnv>()
  .get("/", signedInToView, showOverview)
  .get(ACCOUNT_PATH, signedInToView, showOverview)
  .route("/", pages)
  .route(ACCOUNT_PATH, profileRoutes)
  .route(ACCOUNT_PATH, sessionRoutes)
  .route(ACCOUNT_PATH, linkedAccountRoutes)
  .route(ACCOUNT_PATH, passkeyRoutes)
  .route(ACCOUNT_PATH, identityRoutes)
  .route(ACCOUNT_PATH, appRoutes)
  .route(ACCOUNT_PATH, subscriptionRoutes)
  .route(ACCOUNT_PATH, billingRoutes)
  .route(ACCOUNT_PATH, walletRoutes)
  .route(`${ACCOUNT_PATH}/two-factor`, twoFactorRoutes)
  .route(`${ACCOUNT_PATH}/organizations`, organizationRoutes)
  // AGENT AUTH HOOK: pause/revoke forms of the agents section post here (./agents.tsx).
  .route(`${ACCOUNT_PATH}/agents`, agentAccountRoutes);

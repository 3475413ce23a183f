import { Hono } from "hono";
import { accountRoutes } from "./account/index.js";
import { agentApprovalRoutes } from "./agent-approval.js";
import { certificatePageRoutes } from "./certificates.js";
import { cibaPageRoutes } from "./ciba.js";
import { ASSETS_PATH, assetRoutes } from "./assets.js";
import { consentRoutes } from "./consent.js";
import { devicePageRoutes } from "./device.js";
import { errorRoutes } from "./error.js";
import { invitationRoutes } from "./invitations.js";
import { providePageDeps, type PageDeps, type PageEnv } from "./page-env.js";
import { passwordResetRoutes } from "./password-reset.js";
import { pageSecurityHeaders } from "./security-headers.js";
import { signInRoutes } from "./sign-in.js";
import { signUpRoutes } from "./sign-up.js";
import { twoFactorSignInRoutes } from "./two-factor-sign-in.js";

/**
 * Server-rendered pages: sign-in, sign-up, password reset, consent, the account page and the
 * error page. No client framework; the scripts are key sign-in's and passkeys' (client/). Each
 * form posts here and we replay it against better-auth's own endpoints through `auth.handler`
 * (form-replay.ts), so rate limits, origin checks and the OAuth flow's hooks apply exactly as
 * for an API client. Handlers read their dependencies from `c.var.page` (page-env.ts).
 */
export function pageRoutes(deps: PageDeps) {
  return (
    new Hono<PageEnv>()
      .use("*", pageSecurityHeaders(), providePageDeps(deps))
      .route(ASSETS_PATH, assetRoutes())
      .route("/", signInRoutes)
      .route("/", signUpRoutes)
      .route("/", passwordResetRoutes)
      .route("/", consentRoutes)
      // Two-factor sign-in step, the account page (also at / for a signed-in person) and invitations.
      .route("/", twoFactorSignInRoutes)
      .route("/", accountRoutes)
      .route("/invitations", invitationRoutes)
      // RFC 8628 verification page, and the agent approval page (agent-auth's verification_uri).
      .route("/", devicePageRoutes)
      .route("/", agentApprovalRoutes)
      // OpenID CIBA: approve or deny an application's backchannel request.
      .route("/", cibaPageRoutes)
      .route("/", errorRoutes)
      // The certificate catalog for people: /certificates and /certificates/<slug>.
      .route("/certificates", certificatePageRoutes)
  );
}

import { Hono } from "hono";
import { callAuth, readForm, upstreamMessage } from "./form-replay.js";
import { ownPagesOnly, type PageContext, type PageEnv } from "./page-env.js";
import { html } from "./render.js";
import { ForgotPasswordPage, ResetPasswordPage } from "./sign-in-page.js";
import { withMailBrand } from "../../plugins/branding/mail.js";
import { showBrandOfQuery } from "./brand.js";
import { signedOAuthQuery } from "./oauth-query.js";

/** Reached from a sign-in page, it keeps that page's authorization request: its client's brand is on this page and on the mail. */
async function showForgotPassword(c: PageContext) {
  const q = signedOAuthQuery(new URL(c.req.url).searchParams);
  const brand = await showBrandOfQuery(c, q);
  return html(c, <ForgotPasswordPage oauthQuery={brand ? q : undefined} />);
}

async function requestReset(c: PageContext) {
  const f = await readForm(c);
  const brand = await showBrandOfQuery(c, f.oauth_query);
  await withMailBrand(brand, () => callAuth(c, "/request-password-reset", { email: f.email ?? "", redirectTo: `${c.var.page.authUrl}/reset-password` }));
  // Same answer whether or not the address has an account.
  return html(c, <ForgotPasswordPage sent />);
}

const showResetPassword = (c: PageContext) => html(c, <ResetPasswordPage token={c.req.query("token") ?? ""} error={c.req.query("error") ? "That reset link is invalid or has expired." : null} />);

async function resetPassword(c: PageContext) {
  const f = await readForm(c);
  const upstream = await callAuth(c, "/reset-password", { token: f.token ?? "", newPassword: f.password ?? "" });
  if (!upstream.ok) return html(c, <ResetPasswordPage token={f.token ?? ""} error={await upstreamMessage(upstream, "That reset link is invalid or has expired.")} />, 400);
  return html(c, <ResetPasswordPage token="" done />);
}

/** "Forgot your password?": the e-mailed reset link and the new-password form it opens. */
export const passwordResetRoutes = new Hono<PageEnv>()
  .get("/forgot-password", showForgotPassword)
  .post("/forgot-password", ownPagesOnly, requestReset)
  .get("/reset-password", showResetPassword)
  .post("/reset-password", ownPagesOnly, resetPassword);

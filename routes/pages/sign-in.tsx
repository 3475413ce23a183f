import { Hono } from "hono";
import { BASE_PATH } from "../../lib/mount-paths.js";
import { callAuth, nextLocation, readForm, upstreamMessage } from "./form-replay.js";
import { keySignInOptions } from "./key-sign-in-page.js";
import { signedOAuthQuery } from "./oauth-query.js";
import { ownPagesOnly, type PageContext, type PageEnv } from "./page-env.js";
import { passkeySignInOptions } from "./passkey-sign-in-page.js";
import { html, redirectWith } from "./render.js";
import { safeReturnPath } from "./return-to.js";
import { SignInPage } from "./sign-in-page.js";
import { showBrandOfQuery } from "./brand.js";
import { socialErrorMessage } from "./social-sign-in-page.js";
import { needsSecondFactor, twoFactorStepUrl } from "./two-factor-sign-in.js";

/** A page path keeping the signed authorization request of a pending OAuth flow. */
export const withQuery = (path: string, query?: string) => (query ? `${path}?${query}` : path);

/** The sign-in page with every way to sign in this server offers (key, passkey, social). */
async function renderSignIn(c: PageContext, props: { oauthQuery?: string; email?: string; error?: string | null; returnTo?: string | null }, status = 200) {
  const { auth, sigmaServiceName, logger, socialProviders } = c.var.page;
  await showBrandOfQuery(c, props.oauthQuery);
  const [keySignIn, passkey] = await Promise.all([
    keySignInOptions({ auth, basePath: BASE_PATH, serviceName: sigmaServiceName, logger }, c.req.raw.headers),
    passkeySignInOptions(BASE_PATH, logger),
  ]);
  const page = <SignInPage {...props} signUpHref={withQuery("/sign-up", props.oauthQuery)} forgotHref={withQuery("/forgot-password", props.oauthQuery)} keySignIn={keySignIn} passkey={passkey} socialProviders={socialProviders} />;
  return html(c, page, status);
}

async function showSignIn(c: PageContext) {
  const search = new URL(c.req.url).searchParams;
  const oauthQuery = signedOAuthQuery(search);
  // A provider round trip that failed comes back here with better-auth's `error` code.
  const error = socialErrorMessage(search.get("error"));
  // A page that needed a session (e.g. /device) sends the person here with where to go back to.
  const returnTo = oauthQuery ? null : safeReturnPath(search.get("return_to"));
  return renderSignIn(c, { oauthQuery, error, returnTo });
}

async function signInWithPassword(c: PageContext) {
  const f = await readForm(c);
  const q = f.oauth_query || undefined;
  const upstream = await callAuth(c, "/sign-in/email", { email: f.email ?? "", password: f.password ?? "", rememberMe: true, ...(q ? { oauth_query: q } : {}) });
  if (!upstream.ok) {
    const error = upstream.status === 401 ? "That e-mail and password do not match an account." : await upstreamMessage(upstream, "Sign-in failed. Try again.");
    return renderSignIn(c, { oauthQuery: q, email: f.email, error, returnTo: safeReturnPath(f.return_to) }, upstream.status === 429 ? 429 : 400);
  }
  // Two-factor on: no session yet, a two_factor cookie instead; the code step resumes the flow.
  if (await needsSecondFactor(upstream)) return redirectWith(upstream, twoFactorStepUrl(q, q ? null : safeReturnPath(f.return_to)));
  return redirectWith(upstream, await nextLocation(upstream, (!q && safeReturnPath(f.return_to)) || "/"));
}

/**
 * "Continue with <Name>": better-auth's /sign-in/social answers the provider's authorization
 * URL and sets the state cookie; we pass both to the browser. With `oauth_query` the pending
 * authorization rides in the state and resumes at /api/auth/callback/<id>. Failures come back
 * to this sign-in page (same signed query) with `?error=<code>`.
 */
async function signInWithProvider(c: PageContext) {
  const { authUrl, socialProviders } = c.var.page;
  const f = await readForm(c);
  const q = f.oauth_query || undefined;
  const provider = socialProviders.find((p) => p.id === f.provider);
  if (!provider) return c.redirect(withQuery("/sign-in", q), 303);
  const upstream = await callAuth(c, "/sign-in/social", {
    provider: provider.id,
    callbackURL: `${authUrl}/`,
    errorCallbackURL: `${authUrl}${withQuery("/sign-in", q)}`,
    ...(q ? { oauth_query: q } : {}),
  });
  const next = upstream.ok ? await nextLocation(upstream, "") : "";
  if (!next) {
    // better-auth's own messages here are for developers ("Provider not found"): say it plainly.
    const unavailable = `Signing in with ${provider.name} is not available right now. Try again later.`;
    const error = upstream.status === 429 ? await upstreamMessage(upstream, unavailable) : unavailable;
    return renderSignIn(c, { oauthQuery: q, error }, upstream.status === 429 ? 429 : 400);
  }
  return redirectWith(upstream, next);
}

/** The sign-in page, its e-mail and password form, and "Continue with <Name>". */
export const signInRoutes = new Hono<PageEnv>().get("/sign-in", showSignIn).post("/sign-in", ownPagesOnly, signInWithPassword).post("/sign-in/social", ownPagesOnly, signInWithProvider);

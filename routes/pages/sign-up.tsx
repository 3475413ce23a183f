import { Hono } from "hono";
import { callAuth, nextLocation, readForm, upstreamMessage } from "./form-replay.js";
import { signedOAuthQuery } from "./oauth-query.js";
import { ownPagesOnly, type PageContext, type PageEnv } from "./page-env.js";
import { html, redirectWith } from "./render.js";
import { withQuery } from "./sign-in.js";
import { SignUpPage } from "./sign-in-page.js";
import { withMailBrand } from "../../plugins/branding/mail.js";
import { showBrandOfQuery } from "./brand.js";

async function showSignUp(c: PageContext) {
  const q = signedOAuthQuery(new URL(c.req.url).searchParams);
  await showBrandOfQuery(c, q);
  return html(c, <SignUpPage oauthQuery={q} signInHref={withQuery("/sign-in", q)} />);
}

async function signUp(c: PageContext) {
  const f = await readForm(c);
  const q = f.oauth_query || undefined;
  // The verification mail better-auth sends from inside this call carries the client's brand.
  const brand = await showBrandOfQuery(c, q);
  const upstream = await withMailBrand(brand, () => callAuth(c, "/sign-up/email", { name: f.name ?? "", email: f.email ?? "", password: f.password ?? "", ...(q ? { oauth_query: q } : {}) }));
  if (!upstream.ok) {
    const error = upstream.status === 422 ? "An account with that e-mail already exists. Sign in instead." : await upstreamMessage(upstream, "Sign-up failed. Try again.");
    return html(c, <SignUpPage oauthQuery={q} email={f.email} name={f.name} error={error} signInHref={withQuery("/sign-in", q)} />, upstream.status === 429 ? 429 : 400);
  }
  return redirectWith(upstream, await nextLocation(upstream, "/"));
}

/** Creating an account with e-mail and password; a pending authorization resumes afterwards. */
export const signUpRoutes = new Hono<PageEnv>().get("/sign-up", showSignUp).post("/sign-up", ownPagesOnly, signUp);

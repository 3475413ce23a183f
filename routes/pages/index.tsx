import { Hono, type Context } from "hono";
import type { Kysely } from "kysely";
import type { Auth } from "../../auth.config.js";
import { BASE_PATH } from "../../lib/transport.js";
import { isPublicHttpsUrl } from "../../lib/user-facing.js";
import type { Logger } from "../../lib/logger.js";
import { ASSETS_PATH, assetRoutes } from "./assets.js";
import { ConsentPage, ErrorPage, type IdentityChoice } from "./consent.js";
import { keySignInOptions } from "./key-sign-in.js";
import { errorWords } from "./error-words.js";
import { signedOAuthQuery, verifySignedOAuthQuery } from "./oauth-query.js";
import { pageSecurityHeaders } from "./security-headers.js";
import { accountRoutes } from "./account/index.js";
import { invitationRoutes } from "./invitations.js";
import { nextLocation, pageKit } from "./page-kit.js";
import { passkeySignInOptions } from "./passkey-sign-in.js";
import { needsSecondFactor, twoFactorSignInRoutes, twoFactorStepUrl } from "./two-factor-sign-in.js";
import { safeReturnPath } from "./return-to.js";
import { agentApprovalRoutes } from "./agent-approval.js";
import { devicePageRoutes } from "./device.js";
import { ForgotPasswordPage, ResetPasswordPage, SignInPage, SignUpPage } from "./sign-in.js";
import { socialErrorMessage } from "./social-sign-in.js";
import type { SignInProvider } from "../../lib/social-providers.js";
import { listIdentities } from "../../plugins/bap-identity/store.js";

interface PageDeps {
  auth: Auth;
  db: Kysely<any>;
  authUrl: string;
  /** Key sign-in's route name (SIGMA_SERVICE_NAME). @default "sigma" */
  sigmaServiceName?: string;
  logger?: Logger;
  /** Social providers offered as "Continue with <Name>" (configured ones only). */
  socialProviders?: readonly SignInProvider[];
}


/**
 * Server-rendered pages: sign-in, sign-up, password reset, consent and the error page.
 * No client framework; the one script is key sign-in's (key-sign-in.tsx, client/). Each form posts here and we replay it against
 * better-auth's own endpoints through `auth.handler`, so rate limits, origin checks and
 * the OAuth flow's hooks apply exactly as for an API client.
 */
export function pageRoutes({ auth, db, authUrl, sigmaServiceName, logger, socialProviders = [] }: PageDeps) {
  const app = new Hono();
  app.use("*", pageSecurityHeaders());
  app.route(ASSETS_PATH, assetRoutes());
  const passkeySignIn = () => passkeySignInOptions(BASE_PATH, logger);
  const keySignIn = (c: Context) => keySignInOptions({ auth, basePath: BASE_PATH, serviceName: sigmaServiceName, logger }, c.req.raw.headers);

  // The form-replay helpers (callAuth, sameOrigin, form, redirectWith, html) live in page-kit.ts,
  // shared with the page modules in their own files.
  const kit = pageKit(auth, authUrl);
  const { callAuth, sameOrigin, form, redirectWith, html } = kit;

  async function errorMessage(upstream: Response, fallback: string): Promise<string> {
    if (upstream.status === 429) return "Too many attempts. Wait a minute and try again.";
    const data = (await upstream.json().catch(() => null)) as { message?: unknown } | null;
    return typeof data?.message === "string" && upstream.status < 500 ? data.message : fallback;
  }

  const withQuery = (path: string, query?: string) => (query ? `${path}?${query}` : path);

  app.get("/sign-in", async (c) => {
    const search = new URL(c.req.url).searchParams;
    const q = signedOAuthQuery(search);
    // A provider round trip that failed comes back here with better-auth's `error` code.
    const error = socialErrorMessage(search.get("error"));
    // A page that needed a session (e.g. /device) sends the person here with where to go back to.
    const returnTo = q ? null : safeReturnPath(search.get("return_to"));
    return html(c, <SignInPage oauthQuery={q} error={error} signUpHref={withQuery("/sign-up", q)} keySignIn={await keySignIn(c)} passkey={await passkeySignIn()} socialProviders={socialProviders} returnTo={returnTo} />);
  });

  app.post("/sign-in", async (c) => {
    if (!sameOrigin(c)) return html(c, <ErrorPage error="invalid_request" description="This form must be sent from our own page." />, 403);
    const f = await form(c);
    const q = f.oauth_query || undefined;
    const upstream = await callAuth(c, "/sign-in/email", { email: f.email ?? "", password: f.password ?? "", rememberMe: true, ...(q ? { oauth_query: q } : {}) });
    if (!upstream.ok) {
      const error = upstream.status === 401 ? "That e-mail and password do not match an account." : await errorMessage(upstream, "Sign-in failed. Try again.");
      return html(c, <SignInPage oauthQuery={q} email={f.email} error={error} signUpHref={withQuery("/sign-up", q)} keySignIn={await keySignIn(c)} passkey={await passkeySignIn()} socialProviders={socialProviders} returnTo={safeReturnPath(f.return_to)} />, upstream.status === 429 ? 429 : 400);
    }
    // Two-factor on: no session yet, a two_factor cookie instead; the code step resumes the flow.
    if (await needsSecondFactor(upstream)) return redirectWith(upstream, twoFactorStepUrl(q, q ? null : safeReturnPath(f.return_to)));
    return redirectWith(upstream, await nextLocation(upstream, (!q && safeReturnPath(f.return_to)) || "/"));
  });

  /**
   * "Continue with <Name>": better-auth's /sign-in/social answers the provider's authorization
   * URL and sets the state cookie; we pass both to the browser. With `oauth_query` the pending
   * authorization rides in the state and resumes at /api/auth/callback/<id>. Failures come back
   * to this sign-in page (same signed query) with `?error=<code>`.
   */
  app.post("/sign-in/social", async (c) => {
    if (!sameOrigin(c)) return html(c, <ErrorPage error="invalid_request" description="This form must be sent from our own page." />, 403);
    const f = await form(c);
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
      const error = upstream.status === 429 ? await errorMessage(upstream, unavailable) : unavailable;
      return html(c, <SignInPage oauthQuery={q} error={error} signUpHref={withQuery("/sign-up", q)} keySignIn={await keySignIn(c)} passkey={await passkeySignIn()} socialProviders={socialProviders} />, upstream.status === 429 ? 429 : 400);
    }
    return redirectWith(upstream, next);
  });

  app.get("/sign-up", (c) => {
    const q = signedOAuthQuery(new URL(c.req.url).searchParams);
    return html(c, <SignUpPage oauthQuery={q} signInHref={withQuery("/sign-in", q)} />);
  });

  app.post("/sign-up", async (c) => {
    if (!sameOrigin(c)) return html(c, <ErrorPage error="invalid_request" description="This form must be sent from our own page." />, 403);
    const f = await form(c);
    const q = f.oauth_query || undefined;
    const upstream = await callAuth(c, "/sign-up/email", { name: f.name ?? "", email: f.email ?? "", password: f.password ?? "", ...(q ? { oauth_query: q } : {}) });
    if (!upstream.ok) {
      const error = upstream.status === 422 ? "An account with that e-mail already exists. Sign in instead." : await errorMessage(upstream, "Sign-up failed. Try again.");
      return html(c, <SignUpPage oauthQuery={q} email={f.email} name={f.name} error={error} signInHref={withQuery("/sign-in", q)} />, upstream.status === 429 ? 429 : 400);
    }
    return redirectWith(upstream, await nextLocation(upstream, "/"));
  });

  app.get("/forgot-password", (c) => html(c, <ForgotPasswordPage />));
  app.post("/forgot-password", async (c) => {
    if (!sameOrigin(c)) return html(c, <ErrorPage error="invalid_request" description="This form must be sent from our own page." />, 403);
    const f = await form(c);
    await callAuth(c, "/request-password-reset", { email: f.email ?? "", redirectTo: `${authUrl}/reset-password` });
    // Same answer whether or not the address has an account.
    return html(c, <ForgotPasswordPage sent />);
  });

  app.get("/reset-password", (c) => html(c, <ResetPasswordPage token={c.req.query("token") ?? ""} error={c.req.query("error") ? "That reset link is invalid or has expired." : null} />));
  app.post("/reset-password", async (c) => {
    if (!sameOrigin(c)) return html(c, <ErrorPage error="invalid_request" description="This form must be sent from our own page." />, 403);
    const f = await form(c);
    const upstream = await callAuth(c, "/reset-password", { token: f.token ?? "", newPassword: f.password ?? "" });
    if (!upstream.ok) return html(c, <ResetPasswordPage token={f.token ?? ""} error={await errorMessage(upstream, "That reset link is invalid or has expired.")} />, 400);
    return html(c, <ResetPasswordPage token="" done />);
  });

  app.get("/consent", async (c) => {
    // Nothing is rendered for a request oauth-provider did not sign (our secret, unexpired): the
    // client and scopes shown come from the signed authorization request only, or anyone could
    // dress a registered client up with any scope on our origin.
    const q = signedOAuthQuery(new URL(c.req.url).searchParams);
    const signed = q && (await verifySignedOAuthQuery(q, (await auth.$context).secret)) ? new URLSearchParams(q) : null;
    const clientId = signed?.get("client_id");
    if (!q || !signed || !clientId) return html(c, <ErrorPage error="invalid_consent" description={errorWords("invalid_consent").message} />, 400);
    const client = await db.selectFrom("oauthClient").select(["name", "uri", "icon"]).where("clientId", "=", clientId).executeTakeFirst();
    if (!client) return html(c, <ErrorPage error="invalid_client" description="This application is not registered." />, 400);
    const scopes = (signed.get("scope") ?? "").split(" ").filter(Boolean);
    // A person with several BAP identities picks the one this app will see (the `bap_id` claim).
    let identities: IdentityChoice[] = [];
    if (scopes.includes("profile")) {
      const session = await auth.api.getSession({ headers: c.req.raw.headers });
      if (session) {
        // A suspended identity (plugins/bap-identity/mailbox-proof.ts) is not offered: it speaks for no one.
        // Offered in the order they were registered.
        const rows = (await listIdentities(db, session.user.id, { inForceOnly: true })).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
        const selected = (session.session as { selectedBapId?: string | null }).selectedBapId;
        const chosen = rows.find((r) => r.bapId === selected) ?? rows.find((r) => r.isPrimary) ?? rows[0];
        if (rows.length > 1) identities = rows.map((r) => ({ bapId: r.bapId, name: r.name, selected: r === chosen }));
      }
    }
    return html(c, <ConsentPage clientName={client.name || clientId} clientUri={client.uri} icon={safeIcon(client.icon)} scopes={scopes} oauthQuery={q} identities={identities} />);
  });

  app.post("/consent", async (c) => {
    if (!sameOrigin(c)) return html(c, <ErrorPage error="invalid_request" description="This form must be sent from our own page." />, 403);
    const f = await form(c);
    if (!f.oauth_query) return html(c, <ErrorPage error="invalid_request" description="This consent form is incomplete." />, 400);
    if (f.decision === "allow" && f.bap_id) {
      // Kept on the session; the consent's referenceId resolves it against the identities the user owns.
      const chosen = await callAuth(c, "/update-session", { selectedBapId: f.bap_id });
      if (!chosen.ok && chosen.status === 401) return c.redirect(`/sign-in?${f.oauth_query}`, 303);
    }
    const upstream = await callAuth(c, "/oauth2/consent", { accept: f.decision === "allow", oauth_query: f.oauth_query });
    if (upstream.status === 401) return c.redirect(`/sign-in?${f.oauth_query}`, 303);
    if (!upstream.ok) return html(c, <ErrorPage error="invalid_request" description={await errorMessage(upstream, "This consent request has expired. Start again from the application.")} />, 400);
    return redirectWith(upstream, await nextLocation(upstream, "/"));
  });

  // Two-factor sign-in step, the account page (also at / for a signed-in person) and invitations.
  app.route("/", twoFactorSignInRoutes(kit));
  app.route("/", accountRoutes(kit, { auth, db, basePath: BASE_PATH, socialProviders, logger }));
  app.route("/invitations", invitationRoutes(kit, db));
  // RFC 8628 verification page, and the agent approval page (agent-auth's verification_uri).
  app.route("/", devicePageRoutes({ auth, db, authUrl }));
  app.route("/", agentApprovalRoutes({ auth, authUrl }));

  // Anyone can link here with any query: fixed wording per known code, never the query's text.
  app.get("/error", (c) => {
    const { code, message } = errorWords(c.req.query("error") ?? "invalid_request");
    return html(c, <ErrorPage error={code} description={message} />, 400);
  });

  return app;
}

/** Client icons are registration data: show only https (or loopback http) images. */
function safeIcon(icon: string | null | undefined): string | null {
  // The registration rule for links (lib/user-facing.ts), loopback http included for clients made while developing.
  return icon && isPublicHttpsUrl(icon, { loopbackHttp: true }) ? icon : null;
}

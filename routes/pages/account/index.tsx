import { Hono, type Context } from "hono";
import { revokeAuthorizedApp } from "../../authorized-apps.js";
import type { PageKit } from "../page-kit.js";
import { signInThenBack } from "../return-to.js";
import { AccountPage } from "./account-page.js";
import { ACCOUNT_PATH, accountActions } from "./actions.js";
import { agentAccountRoutes } from "./agents.js";
import { loadAccountView, type AccountDeps } from "./load.js";
import { organizationRoutes } from "./organization-routes.js";
import { confirmBapIdentity, makePrimary, removeBapIdentity } from "../../../plugins/bap-identity/store.js";
import { twoFactorRoutes } from "./two-factor-routes.js";

/**
 * The account page (GET /account, and GET / for a signed-in person) and the forms on it.
 * Server-rendered; every form works without JavaScript except adding a passkey (WebAuthn is a
 * browser API). Each change goes through better-auth's own endpoint via `callAuth`, so its
 * session, freshness, origin and rate-limit rules hold exactly as for an API client.
 */
export function accountRoutes(kit: PageKit, deps: AccountDeps) {
  const app = new Hono();
  const { db } = deps;
  const act = accountActions(kit);

  async function show(c: Context) {
    const session = await kit.auth.api.getSession({ headers: c.req.raw.headers });
    if (!session) return c.redirect(c.req.path === "/" ? "/sign-in" : signInThenBack(ACCOUNT_PATH), 303);
    const view = await loadAccountView(deps, session, new URL(c.req.url).searchParams);
    return kit.html(c, <AccountPage {...view} />);
  }
  app.get("/", show);
  app.get(ACCOUNT_PATH, show);

  // --- profile and e-mail -------------------------------------------------------------
  app.post(`${ACCOUNT_PATH}/profile`, async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    const name = ((await kit.form(c)).name ?? "").trim();
    if (!name || name.length > 200) return act.failed(null, "profile", "INVALID_INPUT");
    return act.replay(c, "/update-user", { name }, "name-changed", "profile");
  });

  app.post(`${ACCOUNT_PATH}/email`, async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    const form = await kit.form(c);
    const newEmail = (form.email ?? "").trim();
    if (!newEmail) return act.failed(null, "profile", "INVALID_INPUT");
    // Re-authentication (plugins/account-email): the password, unless the session is only minutes old.
    const reauth = form.password ? { currentPassword: form.password } : {};
    const upstream = await kit.callAuth(c, "/change-email", { newEmail, ...reauth, callbackURL: `${kit.authUrl}${ACCOUNT_PATH}?notice=email-changed` });
    if (!upstream.ok) return act.failed(upstream, "profile");
    // plugins/account-email says which: changed now, or a confirmation mail went out.
    const data = (await upstream.clone().json().catch(() => null)) as { message?: unknown } | null;
    return act.done(upstream, data?.message === "Email updated" ? "email-changed" : "email-verification-sent", "profile");
  });

  // --- sessions -----------------------------------------------------------------------
  app.post(`${ACCOUNT_PATH}/sign-out`, async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    return kit.redirectWith(await kit.callAuth(c, "/sign-out", {}), "/sign-in");
  });

  app.post(`${ACCOUNT_PATH}/sessions/revoke`, async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    const id = (await kit.form(c)).session_id ?? "";
    // The form names a session by id, and so does /revoke-session (plugins/account-email): no token reaches the page.
    if (!id) return act.failed(null, "sessions", "NOT_FOUND");
    if (id === session.session.id) return kit.redirectWith(await kit.callAuth(c, "/sign-out", {}), "/sign-in");
    return act.replay(c, "/revoke-session", { id }, "session-revoked", "sessions");
  });

  app.post(`${ACCOUNT_PATH}/sessions/revoke-others`, async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    return act.replay(c, "/revoke-other-sessions", {}, "other-sessions-revoked", "sessions");
  });

  // --- linked accounts ----------------------------------------------------------------
  app.post(`${ACCOUNT_PATH}/accounts/link`, async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    const chosen = (await kit.form(c)).provider;
    const provider = deps.socialProviders.find((p) => p.id === chosen);
    if (!provider) return act.failed(null, "accounts", "NOT_FOUND");
    const upstream = await kit.callAuth(c, "/link-social", {
      provider: provider.id,
      callbackURL: `${kit.authUrl}${ACCOUNT_PATH}?notice=account-linked#accounts`,
      errorCallbackURL: `${kit.authUrl}${ACCOUNT_PATH}?error=LINK_FAILED#accounts`,
    });
    const data = upstream.ok ? ((await upstream.clone().json().catch(() => null)) as { url?: unknown } | null) : null;
    // The provider's authorization URL; better-auth set the state cookie that comes with it.
    return typeof data?.url === "string" ? kit.redirectWith(upstream, data.url) : act.failed(upstream, "accounts", upstream.ok ? "LINK_FAILED" : undefined);
  });

  app.post(`${ACCOUNT_PATH}/accounts/unlink`, async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    // better-auth's account row id (the password's row is not offered on the page).
    const account = (await kit.form(c)).account;
    if (!account) return act.failed(null, "accounts", "NOT_FOUND");
    // plugins/social refuses (LAST_SIGN_IN_METHOD) when this is the last way to sign in.
    return act.replay(c, "/unlink-account", { accountId: account }, "account-unlinked", "accounts");
  });

  // --- passkeys (adding one is client/passkeys.ts, straight to better-auth) ------------
  app.post(`${ACCOUNT_PATH}/passkeys/rename`, async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    const f = await kit.form(c);
    const name = (f.name ?? "").trim();
    if (!f.id || !name || name.length > 100) return act.failed(null, "passkeys", "INVALID_INPUT");
    return act.replay(c, "/passkey/update-passkey", { id: f.id, name }, "passkey-renamed", "passkeys");
  });

  app.post(`${ACCOUNT_PATH}/passkeys/delete`, async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    const id = (await kit.form(c)).id;
    if (!id) return act.failed(null, "passkeys", "NOT_FOUND");
    // plugins/passkey-rules refuses (LAST_SIGN_IN_METHOD) when this is the last way to sign in.
    return act.replay(c, "/passkey/delete-passkey", { id }, "passkey-deleted", "passkeys");
  });

  // --- BAP identities and authorized apps ---------------------------------------------
  app.post(`${ACCOUNT_PATH}/identities/primary`, async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    const bapId = (await kit.form(c)).bap_id ?? "";
    const ok = bapId ? await makePrimary(db, session.user.id, bapId) : false;
    return ok ? act.done(null, "primary-identity-set", "identities") : act.failed(null, "identities", "NOT_FOUND");
  });

  app.post(`${ACCOUNT_PATH}/identities/confirm`, async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    const bapId = (await kit.form(c)).bap_id ?? "";
    const ok = bapId ? await confirmBapIdentity(db, session.user.id, bapId) : false;
    return ok ? act.done(null, "identity-confirmed", "identities") : act.failed(null, "identities", "NOT_FOUND");
  });

  app.post(`${ACCOUNT_PATH}/identities/remove`, async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    const bapId = (await kit.form(c)).bap_id ?? "";
    const result = bapId ? await removeBapIdentity(db, kit.auth.$context, session.user.id, bapId) : "not-found";
    if (result === "removed") return act.done(null, "identity-removed", "identities");
    return act.failed(null, "identities", result === "last-sign-in-method" ? "LAST_SIGN_IN_METHOD" : "NOT_FOUND");
  });

  app.post(`${ACCOUNT_PATH}/apps/revoke`, async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    const clientId = (await kit.form(c)).client_id ?? "";
    const ok = clientId ? await revokeAuthorizedApp(db, session.user.id, clientId) : false;
    return ok ? act.done(null, "app-revoked", "apps") : act.failed(null, "apps", "NOT_FOUND");
  });

  app.route(`${ACCOUNT_PATH}/two-factor`, twoFactorRoutes(kit, act));
  app.route(`${ACCOUNT_PATH}/organizations`, organizationRoutes(kit, act));
  // AGENT AUTH HOOK: pause/revoke forms of the agents section post here (./agents.tsx).
  app.route(`${ACCOUNT_PATH}/agents`, agentAccountRoutes(kit, { auth: kit.auth, db }));

  return app;
}

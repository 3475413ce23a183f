import { Hono } from "hono";
import { isPublicHttpsUrl } from "../../lib/user-facing.js";
import { listIdentities } from "../../plugins/bap-identity/store.js";
import { isVerifiedClientHost } from "../../plugins/domain-verification/store.js";
import { findClientDisplay } from "../../plugins/oauth-store/clients.js";
import { describeAuthorizationDetails, validateAuthorizationDetails } from "../../plugins/authorization-details/details.js";
import type { SessionWithUser } from "../session.js";
import { BASE_PATH, MCP_PATH } from "../../lib/mount-paths.js";
import { ConsentPage, type Destination, type IdentityChoice, type ResourceShown } from "./consent-page.js";
import { ErrorPage } from "./error-page.js";
import { errorWords } from "./error-words.js";
import { callAuth, nextLocation, readForm, upstreamMessage } from "./form-replay.js";
import { signedOAuthQuery, verifySignedOAuthQuery } from "./oauth-query.js";
import { ownPagesOnly, withSession, type PageContext, type PageDeps, type PageEnv } from "./page-env.js";
import { html, redirectWith } from "./render.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import { showBrandOf, showBrandOfQuery } from "./brand.js";

async function showConsent(c: PageContext) {
  const { auth, db } = c.var.page;
  // Nothing is rendered for a request oauth-provider did not sign (our secret, unexpired): the
  // client and scopes shown come from the signed authorization request only, or anyone could
  // dress a registered client up with any scope on our origin.
  const q = signedOAuthQuery(new URL(c.req.url).searchParams);
  const signed = q && (await verifySignedOAuthQuery(q, (await auth.$context).secret)) ? new URLSearchParams(q) : null;
  const clientId = signed?.get("client_id");
  const brand = await showBrandOf(c, clientId);
  if (!q || !signed || !clientId) return html(c, <ErrorPage error="invalid_consent" description={errorWords("invalid_consent").message} />, 400);
  const client = await findClientDisplay(db, clientId);
  if (!client) return html(c, <ErrorPage error="invalid_client" description="This application is not registered." />, 400);
  const scopes = (signed.get("scope") ?? "").split(" ").filter(Boolean);
  // A person with several BAP identities picks the one this app will see (the `bap_id` claim).
  const session: SessionWithUser | undefined = c.get("session");
  const identities = scopes.includes("profile") && session ? await identityChoices(c.var.page, session) : [];
  const destination = await destinationOf(c.var.page, clientId, signed.get("redirect_uri"));
  const resources = resourcesShown(c.var.page.authUrl, signed.getAll("resource"));
  // RFC 9396: the signed request's details were checked at authorize (or when pushed); shown in words.
  const raw = signed.get("authorization_details");
  const checked = raw === null ? null : validateAuthorizationDetails(raw);
  if (checked && !checked.ok) return html(c, <ErrorPage error="invalid_request" description={errorWords("invalid_request").message} />, 400);
  const details = checked?.ok ? describeAuthorizationDetails(checked.details) : [];
  // A branded client is shown by its brand, whose logo (served by us) heads the page: no registered icon from elsewhere.
  return html(c, <ConsentPage clientName={brand?.displayName || client.name || clientId} clientUri={client.uri} icon={brand ? null : safeIcon(client.icon)} scopes={scopes} oauthQuery={q} identities={identities} destination={destination} resources={resources} details={details} />);
}

/** The signed request's `resource` values (RFC 8707), as the consent page names them. */
function resourcesShown(authUrl: string, resources: string[]): ResourceShown[] {
  const ours = new Map([
    [`${authUrl}${MCP_PATH}`, "This service's MCP server (your identities, backup status and apps)"],
    // A client that wants a resource and userinfo names both (plugins/resource-policy/userinfo-audience.ts).
    [`${authUrl}${BASE_PATH}${AUTH_PATHS.userinfo}`, "This service's account details, as allowed above (userinfo)"],
  ]);
  return [...new Set(resources)].flatMap((resource) => {
    const url = URL.parse(resource);
    if (!url) return [];
    return [{ url: resource, host: url.host, ours: ours.get(resource) ?? null }];
  });
}

const LOOPBACK = /^(localhost|.+\.localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/** Where the signed request's redirect URI sends the code, and whether a verified domain of the client's stands behind it. */
async function destinationOf({ db }: PageDeps, clientId: string, redirectUri: string | null | undefined): Promise<Destination | null> {
  const url = redirectUri ? URL.parse(redirectUri) : null;
  if (!url) return null;
  if (url.protocol !== "https:" && url.protocol !== "http:") return { shown: `${url.protocol}//`, verified: false, loopback: false };
  const loopback = LOOPBACK.test(url.hostname);
  // Only https hosts can be verified: a code sent over plain http could be read on the way.
  const verified = url.protocol === "https:" && !loopback && (await isVerifiedClientHost(db, clientId, url.hostname));
  return { shown: url.origin, verified, loopback };
}

/** The identities to choose from, when there is a choice; the session's selection is preselected. */
async function identityChoices({ db }: PageDeps, session: SessionWithUser): Promise<IdentityChoice[]> {
  // A suspended identity (plugins/bap-identity/mailbox-proof.ts) is not offered: it speaks for no one.
  // Offered in the order they were registered.
  const rows = (await listIdentities(db, session.user.id, { inForceOnly: true })).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  const selected = (session.session as { selectedBapId?: string | null }).selectedBapId;
  const chosen = rows.find((r) => r.bapId === selected) ?? rows.find((r) => r.isPrimary) ?? rows[0];
  return rows.length > 1 ? rows.map((r) => ({ bapId: r.bapId, name: r.name, selected: r === chosen })) : [];
}

async function decideConsent(c: PageContext) {
  const f = await readForm(c);
  if (!f.oauth_query) return html(c, <ErrorPage error="invalid_request" description="This consent form is incomplete." />, 400);
  if (f.decision === "allow" && f.bap_id) {
    // Kept on the session; the consent's referenceId resolves it against the identities the user owns.
    const chosen = await callAuth(c, "/update-session", { selectedBapId: f.bap_id });
    if (!chosen.ok && chosen.status === 401) return c.redirect(`/sign-in?${f.oauth_query}`, 303);
  }
  const upstream = await callAuth(c, "/oauth2/consent", { accept: f.decision === "allow", oauth_query: f.oauth_query });
  if (upstream.status === 401) return c.redirect(`/sign-in?${f.oauth_query}`, 303);
  if (!upstream.ok) await showBrandOfQuery(c, f.oauth_query);
  if (!upstream.ok) return html(c, <ErrorPage error="invalid_request" description={await upstreamMessage(upstream, "This consent request has expired. Start again from the application.")} />, 400);
  return redirectWith(upstream, await nextLocation(upstream, "/"));
}

/** Client icons are registration data: show only https (or loopback http) images. */
function safeIcon(icon: string | null | undefined): string | null {
  // The registration rule for links (lib/user-facing.ts), loopback http included for clients made while developing.
  return icon && isPublicHttpsUrl(icon, { loopbackHttp: true }) ? icon : null;
}

/** The consent page oauth-provider sends a signed-in person to, and its Allow / Deny answer. */
export const consentRoutes = new Hono<PageEnv>().get("/consent", withSession, showConsent).post("/consent", ownPagesOnly, decideConsent);

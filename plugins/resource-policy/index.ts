import type { OAuthOptions } from "@better-auth/oauth-provider";
import type { BetterAuthPlugin } from "better-auth";
import { APIError } from "better-auth/api";
import type { Kysely } from "kysely";
import { clientResourceIds } from "../oauth-store/clients.js";
import { grantWithoutResources } from "./grant.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import type { Database } from "../../lib/db/tables.js";

type ResourcePolicy = NonNullable<OAuthOptions["resourcePolicy"]>;
type ResourceRow = NonNullable<Awaited<ReturnType<ResourcePolicy["resolve"]>>>;

/**
 * The canonical spelling of a resource indicator (RFC 8707 §2), or null for one that cannot be
 * a resource: the WHATWG serialisation (scheme and host lower case, no default port, no user
 * information, no fragment), except that an origin may be written without its "/". The path is
 * kept as written, trailing slash included: `https://api.example/v1` and `https://api.example/v1/`
 * are two resources, and a resource server checks `aud` against the exact `resource` it
 * publishes (RFC 9728 §3.3).
 */
export function canonicalResource(identifier: string): string | null {
  const url = URL.parse(identifier);
  if (!url || url.hash || identifier.includes("#") || url.username || url.password) return null;
  const href = url.href;
  return url.pathname === "/" && !url.search && `${identifier}/` === href ? identifier : href;
}

/** A client credentials grant at the token endpoint: a token no person consented to. */
function machineGrant(ctx: { path?: string; body?: unknown }): boolean {
  return ctx.path === AUTH_PATHS.token && (ctx.body as { grant_type?: unknown } | undefined)?.grant_type === "client_credentials";
}

function refuse(description: string): never {
  throw new APIError("BAD_REQUEST", { error: "invalid_target", error_description: description });
}

/** A resource no one configured: no policy of its own, the plugin's defaults (token lifetimes, scopes). */
function openResource(identifier: string): ResourceRow {
  const now = new Date();
  return { id: identifier, identifier, name: new URL(identifier).host, disabled: false, createdAt: now, updatedAt: now, policyVersion: 1 };
}

/**
 * RFC 8707 policy (oauth-provider's `resourcePolicy`, patches/README.md op-resource-policy): which
 * resources a client may ask for, checked at authorize, at the token endpoint and on refresh.
 *
 * - A resource must be written canonically ({@link canonicalResource}), else `invalid_target`
 *   naming the canonical form: the same string then binds the code, the tokens and `aud`.
 * - Our own resources (`/mcp`) are open to every client.
 * - A client linked to resources (oauth-provider's `oauthClientResource` rows, managed by an
 *   admin through /admin/oauth2/resources/{resource}/clients/{client_id}) has an allow-list:
 *   only those and our own.
 * - Any other client may ask for any https resource; the consent page names it, and the
 *   person's consent is what allows it (oauth-provider asks again for a resource not yet
 *   consented to). The client credentials grant has no person to consent (RFC 6749 §4.4): a
 *   machine client gets our own resources and its allow-list only.
 * - One resource per token request (RFC 8707 §2.2): a client that was authorized for several
 *   asks for one access token each, naming it in `resource`; a code exchange or refresh may
 *   narrow to one of the authorized resources, never widen (oauth-provider), and a grant
 *   authorized for none gets none ({@link grantWithoutResources}).
 *
 * `policy` is oauth-provider's option; `plugin` carries the token endpoint's hook it relies on.
 */
export function resourcePolicy({ db, ownResources }: { db: Kysely<Database>; ownResources: readonly string[] }): { policy: ResourcePolicy; plugin: BetterAuthPlugin } {
  const own = new Set(ownResources);
  const openHttps = (identifier: string) => identifier.startsWith("https://") && canonicalResource(identifier) === identifier;
  const unscoped = grantWithoutResources();
  const policy: ResourcePolicy = {
    async resolve(ctx, { identifier, clientId, resources, row }) {
      if (ctx.path === AUTH_PATHS.token && unscoped.widens(ctx)) {
        refuse(`this grant was authorized for no resource, so none can be named at the token endpoint (the person never consented to ${identifier}); authorize again with it`);
      }
      const canonical = canonicalResource(identifier);
      if (!canonical) refuse(`resource ${identifier} is not an absolute URI without a fragment or user information`);
      if (canonical !== identifier) refuse(`resource ${identifier} must be written canonically: ${canonical}`);
      if (ctx.path === AUTH_PATHS.token && resources.length > 1) {
        refuse("name one resource per token request (RFC 8707 §2.2): each access token is for one resource");
      }
      if (own.has(identifier)) return row;
      const allowed = await clientResourceIds(db, clientId);
      if (allowed.length > 0) {
        if (!allowed.includes(identifier)) refuse(`resource ${identifier} is not one this client may ask for`);
        return row;
      }
      if (machineGrant(ctx)) refuse(`resource ${identifier} is not one a machine client may ask for: no person consented to it`);
      if (row) return row;
      if (!openHttps(identifier)) refuse(`resource ${identifier} must be an https URL`);
      return openResource(identifier);
    },
    accepts: (identifier) => own.has(identifier) || openHttps(identifier),
  };
  return { policy, plugin: { id: "resource-policy", hooks: { before: [unscoped.hook] } } };
}

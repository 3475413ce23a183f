import type { GenericEndpointContext } from "@better-auth/core";
import { oauthClientMetadataSchema, type ClientDiscovery, type OAuthClient, type OAuthOptions, type SchemaClient, type Scope } from "@better-auth/oauth-provider";
import { registerClientMetadataDocument } from "@better-auth/oauth-provider/internal";
import { APIError } from "better-auth/api";
import type { SafeFetch } from "../../lib/safe-fetch.js";
import { clientIdUrlProblem, clientMetadataFrom, freshFor } from "./document.js";

/**
 * Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document; MCP's preferred
 * way for a client to identify itself) as a ClientDiscovery of @better-auth/oauth-provider:
 * a `client_id` that is an https URL is fetched through the guarded fetcher (lib/safe-fetch.ts:
 * no private addresses, no redirects, a deadline and a size cap), must name itself as
 * `client_id`, and is registered through the provider's own persistence seam, so its
 * redirect URIs are then matched exactly by the authorize endpoint like any client's.
 *
 * @better-auth/cimd (1.7.0-rc.4) implements the same interface, but refuses every non-public
 * host by name before its fetcher runs (so no development or test setup can reach it), caps
 * documents at its own fixed limits and answers 429 within a second of a no-cache refetch.
 */
export interface ClientMetadataDocumentsOptions {
  /** The guarded fetcher, with this discovery's deadline and size cap. */
  fetch: SafeFetch;
  /** Shortest time a fetched document is trusted, whatever its headers say (seconds). @default 60 */
  cacheFloor?: number;
  /** Longest time a fetched document is trusted before it is fetched again (seconds). @default 86400 */
  cacheCeiling?: number;
  /** How long a failed fetch is remembered, so a broken client cannot make us fetch on every request (seconds). @default 10 */
  failureTtl?: number;
}

/** Persisted as the clients' provenance (oauthClient.clientDiscoveryId): never change it. */
export const CLIENT_METADATA_DISCOVERY_ID = "cimd";

type Client = SchemaClient<Scope[]>;

/**
 * Endpoints that cannot pass a discovery's error on: oauth-provider's RP-initiated logout
 * (`getLogoutClient`) turns any error of the client lookup into 500 `server_error`. There a
 * client whose document cannot be had is no client (null, as the ClientDiscovery contract
 * says: resolution fails closed), which end-session answers itself: 400 `invalid_client`, or
 * its error page for a browser; a confirmed logout then ends the session without redirecting.
 */
const LOOKUP_ERRORS_BECOME_500 = new Set(["/oauth2/end-session", "/oauth2/end-session/confirm"]);

function invalidClient(description: string) {
  return new APIError("BAD_REQUEST", { error: "invalid_client", error_description: description });
}

/** The document at `clientId`, parsed, or the reason it cannot be used (as an APIError). */
async function fetchDocument(fetch: SafeFetch, clientId: string) {
  let res: Response;
  try {
    res = await fetch(clientId, { headers: { accept: "application/json" } });
  } catch (err) {
    // OutboundRefused says what was refused (an inside address, the size cap, the deadline).
    throw invalidClient(`client metadata document not fetched: ${err instanceof Error && err.name === "OutboundRefused" ? err.message : "network error"}`);
  }
  // §4: the document is served with 200; a redirect is not followed (the URL is the identity).
  if (res.status !== 200) throw invalidClient(`client metadata document answered HTTP ${res.status}`);
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    throw invalidClient("client metadata document is not JSON");
  }
  return { body, headers: res.headers };
}

export function clientMetadataDocuments(options: ClientMetadataDocumentsOptions): ClientDiscovery {
  const floor = options.cacheFloor ?? 60;
  const ceiling = Math.max(floor, options.cacheCeiling ?? 86_400);
  const failureTtl = options.failureTtl ?? 10;
  /** client_id -> until when the registered client is trusted without a fetch (ms). */
  const freshUntil = new Map<string, number>();
  /** client_id -> the failure to repeat, and until when. */
  const failures = new Map<string, { error: APIError; until: number }>();
  /** One fetch per client_id at a time: concurrent lookups wait for it. */
  const inFlight = new Map<string, Promise<Client>>();

  async function refresh(ctx: GenericEndpointContext, clientId: string, existing: Client | null): Promise<Client> {
    const urlProblem = clientIdUrlProblem(clientId);
    if (urlProblem) throw invalidClient(urlProblem);
    const { body, headers } = await fetchDocument(options.fetch, clientId);
    const checked = clientMetadataFrom(clientId, body);
    if ("problem" in checked) throw invalidClient(checked.problem);
    // The provider's own schema types each field and drops the ones it does not know.
    const parsed = oauthClientMetadataSchema.strip().safeParse(checked.metadata);
    if (!parsed.success) throw invalidClient(`client metadata document: ${parsed.error.issues[0]?.path.join(".")} ${parsed.error.issues[0]?.message}`);
    const provider = ctx.context.getPlugin("oauth-provider") as { options: OAuthOptions<Scope[]> } | null;
    if (!provider) throw new Error("client metadata documents need the oauth-provider plugin");
    const { client } = await registerClientMetadataDocument(ctx, provider.options, {
      metadata: { ...parsed.data, client_id: clientId } as OAuthClient,
      clientId,
      clientDiscoveryId: CLIENT_METADATA_DISCOVERY_ID,
      existingClient: existing ?? undefined,
    });
    freshUntil.set(clientId, Date.now() + freshFor(headers, floor, ceiling) * 1000);
    return client;
  }

  /** The client for `clientId`: trusted while fresh, else fetched again (once at a time); failures are remembered briefly. */
  async function resolveClient(ctx: GenericEndpointContext, clientId: string, existing: Client | null): Promise<Client> {
    const now = Date.now();
    if (existing && (freshUntil.get(clientId) ?? 0) > now) return existing;
    // Another instance (or this one before a restart) fetched it within the floor.
    if (existing && !freshUntil.has(clientId) && now - new Date(existing.updatedAt ?? 0).getTime() < floor * 1000) return existing;
    const failed = failures.get(clientId);
    if (failed && failed.until > now) throw failed.error;
    let pending = inFlight.get(clientId);
    if (!pending) {
      pending = refresh(ctx, clientId, existing).finally(() => inFlight.delete(clientId));
      inFlight.set(clientId, pending);
    }
    try {
      const client = await pending;
      failures.delete(clientId);
      return client;
    } catch (err) {
      // A client that no longer publishes a valid document is refused (fail closed), not served stale.
      freshUntil.delete(clientId);
      if (err instanceof APIError) failures.set(clientId, { error: err, until: Date.now() + failureTtl * 1000 });
      throw err;
    }
  }

  return {
    id: CLIENT_METADATA_DISCOVERY_ID,
    matches: (clientId) => clientId.startsWith("https://"),
    async resolve(ctx, clientId, existing) {
      try {
        return await resolveClient(ctx, clientId, existing);
      } catch (err) {
        if (err instanceof APIError && ctx.path && LOOKUP_ERRORS_BECOME_500.has(ctx.path)) return null;
        throw err;
      }
    },
    fetchClientMetadataResource: (input, init) => options.fetch(String(input instanceof Request ? input.url : input), { method: init?.method, headers: Object.fromEntries(new Headers(init?.headers)) }),
    discoveryMetadata: { client_id_metadata_document_supported: true },
  };
}

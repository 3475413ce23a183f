import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware } from "better-auth/api";
import { verifyBitcoinAuthToken, type BitcoinAuthPolicy } from "../../lib/bitcoin-auth.js";
import { OAuthError } from "../../lib/errors.js";
import { oauthErrorResponse } from "../../lib/respond.js";
import { rawFormOf } from "../../lib/validate.js";
import { namedClientIds, repeatedParameter } from "./named-clients.js";
import { memberKeySchema } from "./schema.js";

export interface MemberKeyOptions {
  bitcoinAuth: BitcoinAuthPolicy;
  /** Public path of the token endpoint, as clients sign it. @default "/api/auth/oauth2/token" */
  tokenPath?: string;
  /** Largest token request body read, in bytes. @default 16384 */
  maxBodyBytes?: number;
}

const CLIENT_CACHE_MS = 30_000;

/**
 * Clients registered with a member public key (`member_pubkey`) authenticate every token
 * request with `X-Auth-Token`: a Bitcoin-Auth token by that key over the token path and
 * the exact raw form body. (Registration stores the key: see plugins/registration-policy.)
 *
 * The check is a before hook of the token endpoint itself (matched by the endpoint's
 * route, not by the URL text, so a query string or another spelling of the URL cannot
 * skip it), and it looks at every place oauth-provider could take the client from: each
 * form `client_id`, HTTP Basic, a client assertion. A request that names a member-key
 * client anywhere must carry that key's signature, whatever client oauth-provider would
 * end up authenticating.
 */
export function memberKey(options: MemberKeyOptions) {
  const tokenPath = options.tokenPath ?? "/api/auth/oauth2/token";
  const maxBody = options.maxBodyBytes ?? 16_384;
  const memberKeys = new Map<string, { key: string | null; until: number }>();

  async function memberKeyOf(adapter: { findOne: <T>(q: { model: string; where: { field: string; value: string }[] }) => Promise<T | null> }, clientId: string) {
    let cached = memberKeys.get(clientId);
    if (!cached || cached.until < Date.now()) {
      const client = await adapter.findOne<{ memberPubkey?: string | null }>({ model: "oauthClient", where: [{ field: "clientId", value: clientId }] });
      cached = { key: client?.memberPubkey ?? null, until: Date.now() + CLIENT_CACHE_MS };
      if (memberKeys.size > 10_000) memberKeys.clear();
      memberKeys.set(clientId, cached);
    }
    return cached.key;
  }

  return {
    id: "member-key",
    schema: memberKeySchema,
    hooks: {
      before: [
        {
          matcher: (ctx) => ctx.path === "/oauth2/token",
          handler: createAuthMiddleware(async (ctx) => {
            const request = ctx.request;
            // Only HTTP requests reach here with a body to sign; a server-side call has no client to authenticate.
            if (!request) return;
            // The endpoint takes only application/x-www-form-urlencoded (RFC 6749 §4.1.3), whose
            // raw text the app kept for exactly this re-read (lib/request-body.ts).
            const raw = rawFormOf(request) ?? (await request.clone().text());
            if (raw.length > maxBody) return oauthErrorResponse(new OAuthError("invalid_request", "request body too large", { status: 413 }));
            const form = new URLSearchParams(raw);
            // RFC 6749 §3.2: parameters MUST NOT be included more than once. An empty first
            // client_id followed by a real one read as two different clients to two readers.
            const repeated = repeatedParameter(form);
            if (repeated) return oauthErrorResponse(new OAuthError("invalid_request", `${repeated} must not be repeated`));

            const keys = new Set<string>();
            for (const clientId of namedClientIds(form, request.headers.get("authorization"))) {
              const key = await memberKeyOf(ctx.context.adapter, clientId);
              if (key) keys.add(key);
            }
            if (keys.size === 0) return;
            const result = await verifyBitcoinAuthToken(request.headers.get("x-auth-token"), { requestPath: tokenPath, body: raw }, options.bitcoinAuth);
            // The signer must be the key every named member-key client registered, not merely any valid key.
            if (!result.ok || keys.size !== 1 || !keys.has(result.pubkey)) {
              ctx.context.logger.info("member-key client authentication failed", { reason: result.ok ? "signer is not the registered key" : result.reason });
              return oauthErrorResponse(new OAuthError("invalid_client", "client authentication failed"));
            }
          }),
        },
      ],
    },
  } satisfies BetterAuthPlugin;
}

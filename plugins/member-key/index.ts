import type { BetterAuthPlugin } from "better-auth";
import { verifyBitcoinAuthToken, type ReplayCache } from "../../lib/bitcoin-auth.js";
import { rawFormOf } from "../../lib/validate.js";
import { MEMBER_KEY_ERRORS } from "./error-codes.js";
import { memberKeySchema } from "./schema.js";

export interface MemberKeyOptions {
  replay: ReplayCache;
  /** Public path of the token endpoint, as clients sign it. @default "/api/auth/oauth2/token" */
  tokenPath?: string;
  /** Largest token request body read, in bytes. @default 16384 */
  maxBodyBytes?: number;
}

const CLIENT_CACHE_MS = 30_000;

function oauthError(status: number, error: string, description: string): Response {
  return new Response(JSON.stringify({ error, error_description: description }), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store", pragma: "no-cache" },
  });
}

function clientIdOf(form: URLSearchParams, authorization: string | null): string | null {
  if (authorization?.toLowerCase().startsWith("basic ")) {
    try {
      const decoded = Buffer.from(authorization.slice(6).trim(), "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      if (colon > 0) return decodeURIComponent(decoded.slice(0, colon));
    } catch {
      return null;
    }
  }
  return form.get("client_id");
}

/**
 * Clients registered with a member public key (`member_pubkey`) authenticate every token
 * request with `X-Auth-Token`: a Bitcoin-Auth token by that key over the token path and
 * the exact raw form body. Runs in `onRequest`, before better-auth parses the body, so the
 * signature covers the bytes the client sent. (Registration stores the key: see
 * plugins/registration-policy.)
 */
export function memberKey(options: MemberKeyOptions) {
  const tokenPath = options.tokenPath ?? "/api/auth/oauth2/token";
  const maxBody = options.maxBodyBytes ?? 16_384;
  const memberKeys = new Map<string, { key: string | null; until: number }>();

  return {
    id: "member-key",
    schema: memberKeySchema,
    async onRequest(request, ctx) {
      if (request.method !== "POST" || !request.url.endsWith("/oauth2/token")) return;
      if (new URL(request.url).pathname !== tokenPath) return;
      const declared = request.headers.get("content-length");
      const length = Number(declared ?? "0");
      if (length > maxBody) return { response: oauthError(413, MEMBER_KEY_ERRORS.invalidRequest, "request body too large") };
      const authorization = request.headers.get("authorization");
      // A client named by HTTP Basic, with a declared length (so the body cannot pass
      // maxBody): the body matters only if that client has a member key. Cloning the
      // request to read it was the largest cost of this hook on every token request.
      let raw: string | undefined;
      let clientId = declared !== null ? clientIdOf(new URLSearchParams(), authorization) : null;
      if (!clientId) {
        raw = rawFormOf(request) ?? (await request.clone().text());
        if (raw.length > maxBody) return { response: oauthError(413, MEMBER_KEY_ERRORS.invalidRequest, "request body too large") };
        clientId = clientIdOf(new URLSearchParams(raw), authorization);
      }
      if (!clientId || clientId.length > 255) return;

      let cached = memberKeys.get(clientId);
      if (!cached || cached.until < Date.now()) {
        const client = await ctx.adapter.findOne<{ memberPubkey?: string | null }>({
          model: "oauthClient",
          where: [{ field: "clientId", value: clientId }],
        });
        cached = { key: client?.memberPubkey ?? null, until: Date.now() + CLIENT_CACHE_MS };
        if (memberKeys.size > 10_000) memberKeys.clear();
        memberKeys.set(clientId, cached);
      }
      if (!cached.key) return;

      raw ??= rawFormOf(request) ?? (await request.clone().text());
      const result = await verifyBitcoinAuthToken(request.headers.get("x-auth-token"), { requestPath: tokenPath, body: raw }, { replay: options.replay });
      // The signer must be the key the client registered, not merely any valid key.
      if (!result.ok || result.pubkey !== cached.key) {
        ctx.logger.info("member-key client authentication failed", { clientId, reason: result.ok ? "signer is not the registered key" : result.reason });
        return { response: oauthError(401, MEMBER_KEY_ERRORS.invalidClient, "client authentication failed") };
      }
    },
  } satisfies BetterAuthPlugin;
}

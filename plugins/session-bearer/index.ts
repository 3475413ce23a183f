import { createHmac, timingSafeEqual } from "node:crypto";
import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware } from "better-auth/api";
import { parseSetCookieHeader, setRequestCookie } from "better-auth/cookies";

/**
 * A session token as `Authorization: Bearer` (the spec's bearerAuth): better-auth's `bearer`
 * plugin, the same behaviour with the HMAC done by node:crypto. Its before-hook turns the bearer
 * token into the session cookie of the request: a signed token (`<token>.<signature>`, what
 * `set-auth-token` hands out) when its signature verifies; an unsigned one signed by us, as
 * `bearer()` does without `requireSignature`. Its after-hook exposes a session cookie the answer
 * sets as `set-auth-token`. better-auth's plugin signs and verifies through WebCrypto (a key
 * import and a thread-pool job each) on every request that carries a Bearer header, OAuth access
 * tokens at userinfo included, and an unsigned token's signature was made only to be checked at
 * once; here the signature is one synchronous HMAC, compared in constant time.
 * tests/accounts/session-bearer.test.ts holds it to better-auth's answers.
 */
const BEARER_SCHEME = "bearer ";

function tryDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** better-call's cookie signature of `value`: HMAC-SHA256 under the secret, padded Base64. */
function signatureOf(value: string, secret: string): Buffer {
  return createHmac("sha256", secret).update(value).digest();
}

/** `<token>.<signature>` when the signature (Base64, padded or not, or Base64url) is the token's. */
function verified(signed: string, secret: string): boolean {
  const [token = "", signature = ""] = signed.split(".");
  const given = Buffer.from(signature, "base64");
  const expected = signatureOf(token, secret);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function sessionBearer() {
  return {
    id: "session-bearer",
    hooks: {
      before: [
        {
          matcher: (context) => Boolean(context.request?.headers.get("authorization") || context.headers?.get("authorization")),
          handler: createAuthMiddleware(async (c) => {
            const authHeader = c.request?.headers.get("authorization") || c.headers?.get("Authorization");
            if (!authHeader || authHeader.slice(0, 7).toLowerCase() !== BEARER_SCHEME) return;
            const token = authHeader.slice(7).trim();
            if (!token) return;
            let cookieToken: string;
            if (token.includes(".")) {
              cookieToken = token.includes("%") ? tryDecode(token) : token;
              if (!verified(cookieToken, c.context.secret)) return;
            } else {
              cookieToken = `${token}.${signatureOf(token, c.context.secret).toString("base64")}`;
            }
            const existing = c.request?.headers || c.headers;
            const headers = new Headers({ ...Object.fromEntries(existing?.entries() ?? []) });
            setRequestCookie(headers, c.context.authCookies.sessionToken.name, cookieToken);
            return { context: { headers } };
          }),
        },
      ],
      after: [
        {
          // Only answers that set a cookie can set a session cookie.
          matcher: (context) => Boolean(context.context?.responseHeaders?.get("set-cookie")),
          handler: createAuthMiddleware(async (ctx) => {
            const setCookie = ctx.context.responseHeaders?.get("set-cookie");
            if (!setCookie) return;
            const sessionCookie = parseSetCookieHeader(setCookie).get(ctx.context.authCookies.sessionToken.name);
            if (!sessionCookie || !sessionCookie.value || sessionCookie["max-age"] === 0) return;
            const exposed = ctx.context.responseHeaders?.get("access-control-expose-headers") || "";
            const names = new Set(exposed.split(",").map((h) => h.trim()).filter(Boolean));
            names.add("set-auth-token");
            ctx.setHeader("set-auth-token", sessionCookie.value);
            ctx.setHeader("Access-Control-Expose-Headers", [...names].join(", "));
          }),
        },
      ],
    },
  } satisfies BetterAuthPlugin;
}

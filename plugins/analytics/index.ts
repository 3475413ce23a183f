import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware, isAPIError } from "better-auth/api";
import { hookOn, type Hook } from "../hooks.js";
import type { AnalyticsCounter } from "./counter.js";
import { analyticsSchema } from "./schema.js";

type HookContext = Parameters<Parameters<typeof createAuthMiddleware>[0]>[0];

const OAUTH_ERROR = /^[a-z_]{1,64}$/;

/** The `error` of a redirect the endpoint answered with (a thrown 302 or the `{url}` answer to fetch), or null. */
function redirectError(returned: unknown): string | null {
  let location: string | null | undefined;
  if (isAPIError(returned)) location = returned.statusCode === 302 ? new Headers(returned.headers).get("location") : null;
  else if (returned && typeof returned === "object") location = typeof (returned as { url?: unknown }).url === "string" ? (returned as { url: string }).url : null;
  if (!location) return null;
  try {
    const error = new URL(location, "http://localhost").searchParams.get("error");
    return error && OAUTH_ERROR.test(error) ? error : null;
  } catch {
    return null;
  }
}

/** The authorization code's record, as oauth-provider writes it to `verification`: its client and person. */
function issuedCode(value: unknown): { clientId: string; userId: string } | null {
  // Cheap first: every other verification value (e-mail links, OTPs, states) is skipped unparsed.
  if (typeof value !== "string" || !value.startsWith('{"type":"authorization_code"')) return null;
  try {
    const parsed = JSON.parse(value) as { userId?: unknown; query?: { client_id?: unknown } };
    const clientId = parsed.query?.client_id;
    return typeof clientId === "string" && typeof parsed.userId === "string" ? { clientId, userId: parsed.userId } : null;
  } catch {
    return null;
  }
}

/**
 * Per-client analytics (Pro) at the authorization step: an authorization code issued is an
 * authorization and a sign-in of its person to that client (counted once a day), whichever
 * endpoint issued it (authorize with consent on record, the consent page, a resumed sign-in):
 * oauth-provider writes every code through better-auth's `verification` create, whose database
 * hook sees it. A person who denies consent, or an authorization request refused back to the
 * client, counts as a refusal by its RFC 6749 code. The token endpoint's answers are counted by
 * plugins/metrics' after-hook (one hook on that path for both), and the fast refresh by its own
 * `issued` callback. All of it is a Map update (./counter.ts); ./flush.ts writes it out.
 */
export function analytics({ counter }: { counter: AnalyticsCounter }) {
  const consentAnswered: Hook = hookOn(
    "/oauth2/consent",
    createAuthMiddleware(async (ctx: HookContext) => {
      const body = (ctx.body ?? {}) as { accept?: unknown; oauth_query?: unknown };
      const error = redirectError(ctx.context.returned);
      if (!error) return;
      const clientId = new URLSearchParams(typeof body.oauth_query === "string" ? body.oauth_query : "").get("client_id");
      if (clientId) counter.count(clientId, "refusal", error);
    }),
  );
  const authorizeAnswered: Hook = hookOn(
    "/oauth2/authorize",
    createAuthMiddleware(async (ctx: HookContext) => {
      const error = redirectError(ctx.context.returned);
      const clientId = (ctx.query as { client_id?: unknown } | undefined)?.client_id;
      if (error && typeof clientId === "string") counter.count(clientId, "refusal", error);
    }),
  );
  return {
    id: "analytics",
    schema: analyticsSchema,
    init() {
      return {
        options: {
          databaseHooks: {
            verification: {
              create: {
                after: async (verification: { value?: unknown }) => {
                  const code = issuedCode(verification.value);
                  if (!code) return;
                  counter.count(code.clientId, "authorization");
                  counter.signedIn(code.clientId, code.userId);
                },
              },
            },
          },
        },
      };
    },
    hooks: { after: [consentAnswered, authorizeAnswered] },
  } satisfies BetterAuthPlugin;
}

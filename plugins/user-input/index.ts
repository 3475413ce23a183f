import { BASE_ERROR_CODES } from "@better-auth/core/error";
import type { BetterAuthPlugin } from "better-auth";
import { APIError, createAuthMiddleware } from "better-auth/api";

/** The user's core profile fields and the JSON types they may have (better-auth's user schema: strings; image may be cleared). */
const FIELD_TYPES: Record<string, (value: unknown) => boolean> = {
  name: (value) => typeof value === "string",
  image: (value) => typeof value === "string" || value === null,
};

/** Where a body carries user fields: the fields object of each endpoint. */
const USER_FIELDS: Record<string, (body: Record<string, unknown>) => unknown> = {
  "/update-user": (body) => body,
  "/admin/update-user": (body) => body.data,
};

/**
 * better-auth 1.7 declares /update-user's body as any record (and /admin/update-user's `data`
 * likewise), so an object or array `name` or `image` reached the database: SQLite refused to
 * bind it (a 500), PostgreSQL would store its text form. Each field is checked against its type
 * before the endpoint runs (OWASP ASVS 4.0 V5.1.4: structured data is validated against a
 * schema) and refused like better-auth's own validation failures.
 */
export function userInput() {
  return {
    id: "user-input",
    hooks: {
      before: [
        {
          matcher: (ctx) => Object.hasOwn(USER_FIELDS, ctx.path ?? ""),
          handler: createAuthMiddleware(async (ctx) => {
            const body = ctx.body as Record<string, unknown> | undefined;
            const fields = body && typeof body === "object" ? USER_FIELDS[ctx.path]!(body) : undefined;
            if (!fields || typeof fields !== "object") return;
            for (const [name, valid] of Object.entries(FIELD_TYPES)) {
              const value = (fields as Record<string, unknown>)[name];
              if (value !== undefined && !valid(value)) throw new APIError("BAD_REQUEST", { message: `[body.${name}] must be a string.`, code: BASE_ERROR_CODES.VALIDATION_ERROR.code });
            }
          }),
        },
        {
          // oauth-provider's before hook (registered after this plugin) hands any truthy body
          // `oauth_query` to `new URLSearchParams` before the endpoint's schema runs: an array
          // such as ["x"] threw a TypeError there (a 500). Only a string can carry the signed
          // query, so anything else is refused with the answer oauth-provider gives a bad
          // signature (400 invalid_signature).
          matcher: (ctx) => {
            const query = (ctx.body as { oauth_query?: unknown } | undefined)?.oauth_query;
            return Boolean(query) && typeof query !== "string";
          },
          handler: createAuthMiddleware(async () => {
            throw new APIError("BAD_REQUEST", { error: "invalid_signature" });
          }),
        },
      ],
    },
  } satisfies BetterAuthPlugin;
}

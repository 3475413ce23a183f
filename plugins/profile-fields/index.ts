import type { BetterAuthPlugin } from "better-auth";
import { APIError, createAuthMiddleware } from "better-auth/api";
import { cleanDisplayName, displayNameProblem, isPublicHttpsUrl } from "../../lib/user-facing.js";
import { PROFILE_FIELD_ERROR_CODES as CODES } from "./error-codes.js";

/** Longest user name kept (the spec's User has no bound; a name is a line on a page, not a document). */
export const MAX_USER_NAME = 200;
/** Longest picture URL kept (the bound registration uses for client URIs). */
export const MAX_USER_IMAGE = 2048;

/** The routes where a person sets their own name and picture. */
const PROFILE_WRITES = new Set(["/sign-up/email", "/update-user"]);

/**
 * A person's `name` and `image` are shown on our pages and released as the `name` and
 * `picture` claims, so relying parties put them in their pages too (OIDC Core §5.1 says
 * `picture` is a URL of an image). On sign-up and update-user:
 * - `name`: at most 200 characters, no control or bidirectional control characters;
 * - `image`: an https URL (loopback http while developing) of at most 2048 characters: a
 *   `javascript:` or `data:` URL is refused, never stored. null or "" clears it.
 * Every other writer of a user (social sign-in from a provider's profile, an administrator,
 * key sign-up) is held to the same rule by a database hook that cleans instead of refusing:
 * controls are removed, the name is cut at 200, an unsafe picture is not stored. And the
 * release side trusts neither: plugins/claims-policy never releases a picture that is not https.
 */
export function profileFields(options: { development: boolean }) {
  const safeImage = (image: string) => isPublicHttpsUrl(image, { loopbackHttp: options.development, maxLength: MAX_USER_IMAGE });
  /** The stored form of the name and image in a user write (only the fields it carries). */
  async function cleanUserWrite(user: { name?: unknown; image?: unknown }) {
    const data: { name?: string; image?: null } = {};
    if (typeof user.name === "string") data.name = cleanDisplayName(user.name, MAX_USER_NAME);
    if (typeof user.image === "string" && user.image !== "" && !safeImage(user.image)) data.image = null;
    return { data };
  }
  return {
    id: "profile-fields",
    $ERROR_CODES: CODES,
    init: () => ({ options: { databaseHooks: { user: { create: { before: cleanUserWrite }, update: { before: cleanUserWrite } } } } }),
    hooks: {
      before: [
        {
          matcher: (ctx) => PROFILE_WRITES.has(ctx.path ?? ""),
          handler: createAuthMiddleware(async (ctx) => {
            const body = ctx.body as { name?: unknown; image?: unknown } | undefined;
            if (!body || typeof body !== "object") return;
            if (typeof body.name === "string" && displayNameProblem(body.name, MAX_USER_NAME)) throw APIError.from("BAD_REQUEST", CODES.INVALID_NAME);
            if (typeof body.image === "string" && body.image !== "" && !safeImage(body.image)) throw APIError.from("BAD_REQUEST", CODES.INVALID_IMAGE);
          }),
        },
      ],
    },
  } satisfies BetterAuthPlugin;
}

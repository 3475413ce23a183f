import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware, isAPIError } from "better-auth/api";
import { isJsonObject } from "../../lib/json.js";
import { brandingSchema } from "./schema.js";

/**
 * Client branding: the table (`npm run db:migrate` creates it), and the client's name on the
 * error page the authorize endpoint sends a browser to. The HTTP surface is
 * routes/branding/branding.ts; it reads and writes through ./service.ts and ./store.ts. The pages
 * and the e-mails of an authorization flow ask ./brand.ts for the brand in force.
 *
 * oauth-provider answers a request it will not send back to the client (a disabled client, an
 * unregistered redirect URI, a grant the client may not use) with a redirect to our /error page
 * (`onAPIError.errorURL`), naming only the error. The after-hook adds the request's `client_id`,
 * so that page can show the client's brand (routes/pages/error.tsx); the page's words stay ours.
 */
export function branding(options: { errorUrl: string }) {
  const errorPage = `${options.errorUrl}?`;
  const withClient = (location: string, clientId: string) =>
    location.startsWith(errorPage) && !new URL(location).searchParams.has("client_id") ? `${location}&client_id=${encodeURIComponent(clientId)}` : null;
  return {
    id: "client-branding",
    schema: brandingSchema,
    hooks: {
      after: [
        {
          matcher: (ctx) => ctx.path === "/oauth2/authorize",
          handler: createAuthMiddleware(async (ctx) => {
            const clientId = ctx.query?.client_id;
            if (typeof clientId !== "string" || !clientId) return;
            const returned = ctx.context.returned;
            // A browser navigation: the 302 again, to the same page with the client named.
            if (isAPIError(returned) && returned.statusCode === 302 && returned.headers instanceof Headers) {
              const next = withClient(returned.headers.get("location") ?? "", clientId);
              if (next) throw ctx.redirect(next);
              return;
            }
            // A fetch or Accept: application/json: `{redirect: true, url}`.
            if (isJsonObject(returned) && returned.redirect === true && typeof returned.url === "string") {
              const next = withClient(returned.url, clientId);
              if (next) return ctx.json({ ...returned, url: next });
            }
          }),
        },
      ],
    },
  } satisfies BetterAuthPlugin;
}

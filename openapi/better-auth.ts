import { openAPI } from "better-auth/plugins";
import type { Auth } from "../auth.config.js";
import { OAUTH_ROUTES } from "../lib/error-families.js";
import { BASE_PATH } from "../lib/mount-paths.js";
import { oauthErrorResponses, SESSION, type Operation, type Paths, type Schema } from "./components.js";

/**
 * better-auth's own endpoints, described by better-auth's OpenAPI generator (the `openAPI`
 * plugin's `generateOpenAPISchema`) from each endpoint's metadata, run once on our configured
 * instance. The plugin itself is not enabled: its routes (and its CDN-loaded reference page) are
 * not served. Paths get the mount prefix; the security names become ours; the OAuth endpoints
 * answer RFC 6749 errors (lib/error-families.ts), so their 4xx say so.
 */
export async function betterAuthPaths(auth: Auth): Promise<{ paths: Paths; schemas: Record<string, Schema> }> {
  const generate = openAPI().endpoints.generateOpenAPISchema as unknown as (ctx: { context: unknown }) => Promise<{
    paths: Paths;
    components: { schemas: Record<string, Schema> };
  }>;
  const generated = await generate({ context: await auth.$context });
  const paths: Paths = {};
  for (const [path, methods] of Object.entries(generated.paths)) {
    const full = BASE_PATH + path;
    paths[full] = Object.fromEntries(Object.entries(methods).map(([method, op]) => [method, adapt(full, op)]));
  }
  return { paths, schemas: referenced(paths, generated.components.schemas) };
}

/** The operation with our security scheme names, tags and, on OAuth endpoints, RFC 6749 errors. */
function adapt(path: string, op: Operation): Operation {
  const tags = ((op.tags as string[] | undefined) ?? []).filter((t) => t !== "Default");
  const out: Operation = { ...op, tags: tags.length ? tags : ["better-auth"], security: SESSION };
  if (OAUTH_ROUTES.has(path)) {
    const responses = { ...(op.responses as Record<string, unknown>) };
    for (const status of ["400", "401", "403", "429"]) delete responses[status];
    out.responses = { ...responses, ...oauthErrorResponses([400, 401, 429]) };
    out.security = path.endsWith("/userinfo") ? [{ bearer: [] }] : [{ clientAuth: [] }, {}];
  }
  if (out.description === undefined) delete out.description;
  if (out.operationId === undefined) delete out.operationId;
  return out;
}

/** Only the component schemas the paths refer to (the generator lists every table, internal ones too). */
function referenced(paths: Paths, all: Record<string, Schema>): Record<string, Schema> {
  const keep: Record<string, Schema> = {};
  const pending = [JSON.stringify(paths)];
  while (pending.length) {
    for (const [, name] of pending.pop()!.matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
      if (!name || keep[name] || !all[name]) continue;
      keep[name] = all[name]!;
      pending.push(JSON.stringify(all[name]));
    }
  }
  return keep;
}

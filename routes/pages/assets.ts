import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { brotliCompress, constants as zlib, gzip } from "node:zlib";
import { Hono } from "hono";
import { etag } from "hono/etag";

/**
 * The pages' browser code, bundled with esbuild into memory the first time a page needs it
 * (no build step, no artefacts on disk, no CDN) and served from /assets/<name>.<hash>.js.
 * The content hash in the URL lets browsers keep it for a year; the ETag answers revalidation.
 */
export interface BrowserAsset {
  /** URL path, with the content hash: /assets/key-sign-in.<hash>.js */
  path: string;
  etag: string;
  body: Uint8Array<ArrayBuffer>;
  /**
   * The body compressed, made the first time a browser asks for that coding and kept: a page
   * that only names the script's URL (the API reference's megabytes) never waits for it.
   */
  encoded(coding: "gzip" | "br"): Promise<Uint8Array<ArrayBuffer>>;
}

export const ASSETS_PATH = "/assets";
const IMMUTABLE = "public, max-age=31536000, immutable";

/** Each browser script by its name in the URL, and its entry point in client/. */
const ENTRIES = {
  "key-sign-in": fileURLToPath(new URL("./client/key-sign-in.ts", import.meta.url)),
  passkeys: fileURLToPath(new URL("./client/passkeys.ts", import.meta.url)),
  "wallet-connect": fileURLToPath(new URL("./client/wallet-connect.ts", import.meta.url)),
  "api-reference": fileURLToPath(new URL("./client/api-reference.ts", import.meta.url)),
} as const;
type ScriptName = keyof typeof ENTRIES;

const built = new Map<ScriptName, Promise<BrowserAsset>>();

/** A browser script, built once per process; a failed build is retried on the next call. */
export function browserScript(name: ScriptName): Promise<BrowserAsset> {
  let asset = built.get(name);
  if (!asset) {
    asset = bundle(name, ENTRIES[name]).catch((err: unknown) => {
      built.delete(name);
      throw err;
    });
    built.set(name, asset);
  }
  return asset;
}

/** The key sign-in script (client/key-sign-in.ts). */
export function keySignInScript(): Promise<BrowserAsset> {
  return browserScript("key-sign-in");
}

/** Passkey sign-in and registration (client/passkeys.ts). */
export function passkeyScript(): Promise<BrowserAsset> {
  return browserScript("passkeys");
}

/** Connecting a browser wallet on the account page (client/wallet-connect.ts). */
export function walletConnectScript(): Promise<BrowserAsset> {
  return browserScript("wallet-connect");
}

/** The API reference renderer (client/api-reference.ts, Scalar's bundle) for /api/reference. */
export function apiReferenceScript(): Promise<BrowserAsset> {
  return browserScript("api-reference");
}

async function bundle(name: string, entry: string): Promise<BrowserAsset> {
  // Loaded only when a page first needs it: a server that never renders one never starts esbuild.
  const { build } = await import("esbuild");
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    target: ["es2020"],
    minify: true,
    legalComments: "eof",
    charset: "utf8",
    logLevel: "silent",
  });
  const output = result.outputFiles[0];
  if (!output) throw new Error(`esbuild produced no output for ${name}`);
  const body = new Uint8Array(output.contents);
  const digest = createHash("sha256").update(body).digest();
  const compress = {
    gzip: () => promisify(gzip)(body, { level: 9 }),
    br: () => promisify(brotliCompress)(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: brotliQuality(body.length), [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } }),
  };
  const encodings = new Map<"gzip" | "br", Promise<Uint8Array<ArrayBuffer>>>();
  return {
    path: `${ASSETS_PATH}/${name}.${digest.subarray(0, 8).toString("hex")}.js`,
    etag: `"${digest.toString("base64url")}"`,
    body,
    encoded(coding) {
      let done = encodings.get(coding);
      if (!done) {
        done = compress[coding]().then((bytes) => new Uint8Array(bytes));
        // A failed compression is tried again on the next request, not kept.
        done.catch(() => encodings.delete(coding));
        encodings.set(coding, done);
      }
      return done;
    },
  };
}

/**
 * Brotli's best quality (11) for the small page scripts; 9 for the megabytes of the API
 * reference renderer, where 11 takes half a minute on a small machine for 10% fewer bytes.
 */
function brotliQuality(bytes: number): number {
  return bytes > 1024 * 1024 ? 9 : 11;
}

/** RFC 9110 §12.5.3: is `coding` acceptable (listed, or by `*`) with a q-value above zero? */
function accepts(header: string | undefined, coding: string): boolean {
  let wildcard = false;
  for (const part of (header ?? "").toLowerCase().split(",")) {
    const [name, ...params] = part.trim().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const ok = !q || Number(q.slice(2)) > 0;
    if (name === coding) return ok;
    if (name === "*") wildcard = ok;
  }
  return wildcard;
}

const SCRIPT_HEADERS = {
  "content-type": "text/javascript; charset=utf-8",
  "cache-control": IMMUTABLE,
  vary: "accept-encoding",
  "x-content-type-options": "nosniff",
  "cross-origin-resource-policy": "same-origin",
};
/** If-None-Match answered by hono/etag, over the content hash computed at build; a 304 keeps these headers (not Content-Type, RFC 9110 §15.4.5). */
const revalidated = etag({ retainedHeaders: ["etag", "cache-control", "vary", "x-content-type-options", "cross-origin-resource-policy"] });

/** GET /assets/<name>.<hash>.js: only the current build's URL exists; anything else is a 404. */
export function assetRoutes() {
  const app = new Hono();
  app.get("/:file", revalidated, async (c, next) => {
    // <name>.<hash>.js: build (or reuse) that script, then the whole path must be its current one.
    const name = c.req.param("file").split(".")[0] ?? "";
    if (!Object.hasOwn(ENTRIES, name)) return next();
    const asset = await browserScript(name as ScriptName);
    if (c.req.path !== asset.path) return next();
    const headers: Record<string, string> = { ...SCRIPT_HEADERS, etag: asset.etag };
    const encoding = c.req.header("accept-encoding");
    if (accepts(encoding, "br")) return c.body(await asset.encoded("br"), 200, { ...headers, "content-encoding": "br" });
    if (accepts(encoding, "gzip")) return c.body(await asset.encoded("gzip"), 200, { ...headers, "content-encoding": "gzip" });
    return c.body(asset.body, 200, headers);
  });
  return app;
}

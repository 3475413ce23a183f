import { APIError } from "better-auth/api";
import type { Context } from "hono";
import * as v from "valibot";
import { problems, type InvalidParam } from "./errors.js";

/** JSON pointer (RFC 6901) of a valibot issue's path. */
function pointerOf(issue: v.BaseIssue<unknown>): string {
  const path = issue.path?.map((p) => String(p.key).replace(/~/g, "~0").replace(/\//g, "~1")) ?? [];
  return "/" + path.join("/");
}

/** Valibot result -> typed value, or a 400 problem listing each bad member by JSON pointer. */
export function check<S extends v.GenericSchema>(schema: S, input: unknown, what = "request body"): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  const errors: InvalidParam[] = result.issues.map((issue) => ({ pointer: pointerOf(issue), reason: issue.message }));
  throw problems.badRequest(`The ${what} is invalid: ${errors.map((e) => `${e.pointer} ${e.reason}`).join("; ")}`, errors);
}

/** Valibot result -> typed value, or the RFC 6749 §5.2 `invalid_request` of an OAuth endpoint naming the first bad parameter. */
export function checkOAuthParams<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  const issue = result.issues[0];
  const field = issue.path?.map((p) => String(p.key)).join(".") ?? "request";
  throw new APIError("BAD_REQUEST", { error: "invalid_request", error_description: `${field}: ${issue.message}` });
}

/**
 * Reads a JSON body at the edge: size-limited, content type checked, parsed, validated.
 * Returns the raw text too, for routes whose signatures cover the exact bytes.
 */
export async function readJson<S extends v.GenericSchema>(c: Context, schema: S, maxBytes = 64 * 1024): Promise<{ value: v.InferOutput<S>; raw: string }> {
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/(.+\+)?json\b/i.test(type)) throw problems.unsupportedMediaType();
  const declared = Number(c.req.header("content-length") ?? "0");
  if (declared > maxBytes) throw problems.tooLarge();
  const raw = await c.req.text();
  if (Buffer.byteLength(raw) > maxBytes) throw problems.tooLarge();
  if (hasNulInJson(raw)) throw problems.badRequest(NUL_REFUSED);
  if (jsonTooDeep(raw)) throw problems.badRequest(TOO_DEEP_REFUSED);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw problems.badRequest("The request body is not valid JSON.");
  }
  return { value: check(schema, parsed), raw };
}

/**
 * NUL characters. No parameter of ours or of OAuth has a use for them, SQLite and
 * PostgreSQL disagree about them (PostgreSQL refuses to store or even compare text
 * containing U+0000, which surfaced as 500s), so they are refused at the edge: in a query
 * string or form as %00, in JSON as the \u0000 escape (not an escaped backslash before
 * "u0000"), anywhere as the raw byte.
 */
export function hasNulInForm(text: string): boolean {
  return text.includes("\0") || text.includes("%00");
}
export function hasNulInJson(text: string): boolean {
  return text.includes("\0") || /(?:^|[^\\])(?:\\\\)*\\u0000/.test(text);
}
export const NUL_REFUSED = "NUL characters (U+0000) are not accepted in requests.";

/**
 * How deeply JSON may nest. No document of ours or of OAuth needs more than a handful of
 * levels, and deeper ones reach recursive code (JSON.stringify, better-auth's deep merge of a
 * registration body) that overflows the stack at a few thousand levels: a 500 for anyone
 * (OWASP ASVS 4.0 V13.1: bound parsed input). Counted on the raw text, before anything parses it.
 */
export const MAX_JSON_DEPTH = 32;
export const TOO_DEEP_REFUSED = `JSON nested more than ${MAX_JSON_DEPTH} levels deep is not accepted.`;

/** Whether `text` opens more than `max` arrays or objects inside one another (brackets in strings do not count). */
export function jsonTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c) i++; // a backslash escapes the next character
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x7b || ch === 0x5b) {
      if (++depth > max) return true;
    } else if (ch === 0x7d || ch === 0x5d) depth--;
  }
  return false;
}

/**
 * Where better-call (patches/better-call+1.4.5.patch) keeps and looks for the raw text of a
 * URL-encoded body, so endpoints that read a form twice need not tee the request.
 */
export const RAW_FORM_BODY = Symbol.for("better-call.rawFormBody");

/** The form text already read for this request (withBufferedBody, routes/auth/better-auth.ts), if any. */
export function rawFormOf(request: Request): string | undefined {
  const text = (request as unknown as Record<symbol, unknown>)[RAW_FORM_BODY];
  return typeof text === "string" ? text : undefined;
}

/** Query parameters, validated like a body. */
export function readQuery<S extends v.GenericSchema>(c: Context, schema: S): v.InferOutput<S> {
  return check(schema, c.req.query(), "query");
}

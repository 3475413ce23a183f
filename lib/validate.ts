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
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw problems.badRequest("The request body is not valid JSON.");
  }
  return { value: check(schema, parsed), raw };
}

/** Query parameters, validated like a body. */
export function readQuery<S extends v.GenericSchema>(c: Context, schema: S): v.InferOutput<S> {
  return check(schema, c.req.query(), "query");
}

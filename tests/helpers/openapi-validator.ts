import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

/**
 * Answers checked against the served OpenAPI document, the way a generated client relies on
 * it: the request finds its operation (path template and method), the status is one the
 * operation lists (or its `default`), the content type is one that response lists, and a JSON
 * body validates against that media type's schema (JSON Schema 2020-12, ajv with formats).
 *
 * A route that answers but is not in the document is a finding: only 404 and 405 may come
 * from a path or method the document does not list (nothing is served there). So a route
 * added without its description fails every test that sends it a request through here.
 */

export interface Answer {
  method: string;
  /** The request target: path and query (the query is ignored). */
  url: string;
  status: number;
  contentType: string | null | undefined;
  /** The raw body text. */
  body: string;
}

type Doc = { paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>> };

const API = /^\/(?:api(?:\/|$)|\.well-known\/)/;
const STANDARD_METHODS = new Set(["get", "put", "post", "delete", "patch", "options", "head", "trace", "connect"]);

interface Template {
  path: string;
  pattern: RegExp;
  /** Literal characters: a more literal template wins (`/x/status` over `/x/{id}`). */
  literal: number;
}

export class ResponseValidator {
  private readonly ajv: Ajv2020;
  private readonly templates: Template[];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: Doc) {
    // OpenAPI 3.1 Schema Objects are JSON Schema 2020-12 with a few annotations of their own
    // (example, discriminator, xml, externalDocs): not strict about unknown keywords.
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    (addFormats as unknown as (ajv: Ajv2020) => void)(this.ajv);
    this.ajv.addSchema(doc as object, "openapi.json");
    this.templates = Object.keys(doc.paths)
      .map((path) => ({
        path,
        pattern: new RegExp(`^${path.split(/\{[^}]+\}/).map(escapeRegExp).join("[^/]+")}$`),
        literal: path.replace(/\{[^}]+\}/g, "").length,
      }))
      .sort((a, b) => b.literal - a.literal);
  }

  /** What is wrong with this answer by the document ("" when nothing). */
  check(answer: Answer): string {
    const method = answer.method.toLowerCase();
    const path = decodeSafely(answer.url.split("?")[0] ?? "");
    const label = `${answer.method.toUpperCase()} ${path.slice(0, 120)} -> ${answer.status}`;
    // The document is the JSON API; the HTML pages and their assets are not part of it.
    if (!API.test(path)) return "";
    // Node's HTTP parser answers an oversized header block before any route runs.
    if (answer.status === 431) return "";
    const template = this.templates.find((t) => t.pattern.test(path) && method in (this.doc.paths[t.path] ?? {}));
    if (!template) {
      // Nothing served there: no route (404), not this method (405), or a body refused at the edge before routing (413).
      if (answer.status === 404 || answer.status === 405 || answer.status === 413) return "";
      // CORS preflights and HEAD are answered by the framework for every GET route; a made-up method is refused before routing.
      if (!STANDARD_METHODS.has(method) || method === "options" || method === "head") return "";
      return `${label}: answered, but no operation of the document matches ${answer.method.toUpperCase()} ${path.slice(0, 120)}`;
    }
    const responses = this.doc.paths[template.path]![method]!.responses ?? {};
    const statusKey = [String(answer.status), `${String(answer.status)[0]}XX`, "default"].find((k) => k in responses);
    if (!statusKey) return `${label}: ${template.path} ${method} lists no ${answer.status} (lists ${Object.keys(responses).join(", ")})`;
    const content = responses[statusKey]!.content;
    const type = (answer.contentType ?? "").split(";")[0]!.trim().toLowerCase();
    if (!content) {
      return answer.body.length === 0 || answer.status >= 300 && answer.status < 400 ? "" : `${label}: the document lists no body for ${statusKey}, the answer has ${type || "one"}`;
    }
    const mediaKey = Object.keys(content).find((k) => k === type) ?? Object.keys(content).find((k) => mediaMatches(k, type));
    if (!mediaKey) {
      if (!answer.body.length && !type) return `${label}: empty answer where the document lists ${Object.keys(content).join(", ")}`;
      return `${label}: content type ${type || "(none)"}, the document lists ${Object.keys(content).join(", ")}`;
    }
    if (!/\bjson\b|\+json$/.test(mediaKey) || content[mediaKey]!.schema === undefined) return "";
    let value: unknown;
    try {
      value = JSON.parse(answer.body);
    } catch {
      return `${label}: ${mediaKey} body is not JSON: ${answer.body.slice(0, 120)}`;
    }
    const validate = this.validatorFor(`${template.path} ${method} ${statusKey} ${mediaKey}`, content[mediaKey]!.schema);
    if (validate(value)) return "";
    const errors = (validate.errors ?? []).slice(0, 4).map((e) => `${e.instancePath || "/"} ${e.message ?? ""}${e.params && "additionalProperty" in e.params ? ` (${String(e.params.additionalProperty)})` : ""}`);
    return `${label}: body does not match ${template.path} ${method} ${statusKey} ${mediaKey}: ${errors.join("; ")}; body ${answer.body.slice(0, 200)}`;
  }

  /** Every finding for these answers, one line each, the same finding once. */
  findings(answers: Answer[]): string[] {
    return [...new Set(answers.map((a) => this.check(a)).filter(Boolean))];
  }

  /** The schema compiled once, its local references (`#/components/...`) pointed at the document. */
  private validatorFor(key: string, schema: unknown): ValidateFunction {
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\//g, '"$ref":"openapi.json#/')) as object);
      this.compiled.set(key, validate);
    }
    return validate;
  }
}

/** The validator of the document a running server serves. */
export async function validatorFor(baseUrl: string): Promise<ResponseValidator> {
  const res = await fetch(`${baseUrl}/api/openapi.json`);
  if (!res.ok) throw new Error(`GET /api/openapi.json: ${res.status}`);
  return new ResponseValidator((await res.json()) as Doc);
}

function mediaMatches(listed: string, actual: string): boolean {
  if (listed === "*/*") return true;
  const [major, minor] = listed.split("/");
  return minor === "*" && actual.startsWith(`${major}/`);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function decodeSafely(path: string): string {
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}

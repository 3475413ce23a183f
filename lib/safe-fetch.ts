import { lookup } from "node:dns/promises";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { rootCertificates } from "node:tls";
import { nonPublicReason } from "./ip-address.js";

/**
 * The one guarded fetcher for requests whose target someone else chose (an agent host's
 * `jwks_url`, a client's `backchannel_logout_uri`). OWASP SSRF Prevention Cheat Sheet and
 * ASVS 5.0 V1.3.6, step by step:
 * 1. http(s) only; the host is resolved here, and EVERY address it resolves to must be public
 *    unicast (lib/ip-address.ts), or nothing is sent. IP literals in any spelling (2130706433,
 *    0x7f.1, [::ffff:127.0.0.2]) are normalised by the WHATWG URL parser before the check.
 * 2. The connection goes to the address that was checked: the socket's `lookup` is pinned to
 *    it, so a second DNS answer (rebinding) is never consulted. TLS still verifies the name.
 * 3. No redirects are followed (a 3xx is returned as it is), a deadline covers the whole
 *    exchange, and the body is cut off past a size cap.
 * `allowPrivate` (OUTBOUND_ALLOW_PRIVATE, development and tests only) skips the address rule.
 * `extraCa` (OUTBOUND_EXTRA_CA_FILE) adds certificate authorities to the system's; TLS is
 * verified either way.
 */

export interface SafeFetchOptions {
  /** OUTBOUND_ALLOW_PRIVATE: loopback and private targets allowed. @default false */
  allowPrivate: boolean;
  /** @default 5000 */
  timeoutMs?: number;
  /** Largest response body read, in bytes. @default 1048576 */
  maxBytes?: number;
  /** OUTBOUND_EXTRA_CA_FILE: PEM certificates trusted besides Node's bundled roots. @default none */
  extraCa?: string;
}
export interface SafeRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | URLSearchParams;
}
export interface SafeFetch {
  (url: string, init?: SafeRequest): Promise<Response>;
  /** Step 1 alone, for refusing a URL when it is registered: throws OutboundRefused. */
  assertAllowed(url: string): Promise<void>;
  /** The same fetcher (same address rule and CAs) with its own deadline or size cap, for a caller that needs them. */
  withLimits(limits: Pick<SafeFetchOptions, "timeoutMs" | "maxBytes">): SafeFetch;
}

/** The target was refused before any byte was sent, or the exchange broke a limit. */
export class OutboundRefused extends Error {
  override name = "OutboundRefused";
}

const NULL_BODY = new Set([101, 204, 205, 304]);

/** The address to connect to for `url`, after the checks of step 1. */
export async function resolveTarget(url: URL, allowPrivate: boolean): Promise<{ address: string; family: 4 | 6 }> {
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new OutboundRefused(`scheme ${url.protocol} is not allowed`);
  if (url.username || url.password) throw new OutboundRefused("credentials in the URL are not allowed");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const answers = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookup(host, { all: true, verbatim: true }).catch(() => []);
  if (!answers.length) throw new OutboundRefused(`${url.hostname} does not resolve`);
  if (!allowPrivate) {
    for (const { address } of answers) {
      const reason = nonPublicReason(address);
      if (reason) throw new OutboundRefused(`${url.hostname} resolves to ${address}: ${reason}`);
    }
  }
  const first = answers[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}

function toHeaders(raw: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, v);
  }
  return headers;
}

export function createSafeFetch(options: SafeFetchOptions): SafeFetch {
  const timeoutMs = options.timeoutMs ?? 5000;
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  const ca = options.extraCa ? [...rootCertificates, options.extraCa] : undefined;
  const parse = (target: string) => {
    try {
      return new URL(target);
    } catch {
      throw new OutboundRefused("not an absolute URL");
    }
  };
  async function safeFetch(target: string, init: SafeRequest = {}): Promise<Response> {
    const url = parse(target);
    const deadline = AbortSignal.timeout(timeoutMs);
    const { address, family } = await resolveTarget(url, options.allowPrivate);
    // Step 2: whatever name the socket is asked to resolve, it gets the checked address.
    const pinned: LookupFunction = (_host, opts, callback) => {
      if (opts.all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
      else callback(null, address, family);
    };
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const body = init.body === undefined ? undefined : String(init.body);
    const headers = { ...init.headers, ...(body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) }) };
    return new Promise<Response>((resolve, reject) => {
      const fail = (err: Error) => {
        reject(err);
        req.destroy();
      };
      const req = send(url, { method: init.method ?? "GET", headers, lookup: pinned, signal: deadline, ...(ca && url.protocol === "https:" ? { ca } : {}) }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) fail(new OutboundRefused(`response larger than ${maxBytes} bytes`));
          else chunks.push(chunk);
        });
        res.on("error", (err) => fail(deadline.aborted ? new OutboundRefused(`no answer within ${timeoutMs} ms`) : err));
        res.on("end", () => {
          if (size > maxBytes) return;
          const status = res.statusCode ?? 502;
          if (status < 200 || status > 599) return fail(new OutboundRefused(`unexpected status ${status}`));
          resolve(new Response(NULL_BODY.has(status) ? null : Buffer.concat(chunks), { status, headers: toHeaders(res.headers) }));
        });
      });
      req.on("error", (err) => reject(deadline.aborted ? new OutboundRefused(`no answer within ${timeoutMs} ms`) : err));
      req.end(body);
    });
  }
  return Object.assign(safeFetch, {
    async assertAllowed(target: string) {
      await resolveTarget(parse(target), options.allowPrivate);
    },
    withLimits: (limits: Pick<SafeFetchOptions, "timeoutMs" | "maxBytes">) => createSafeFetch({ ...options, ...limits }),
  });
}

import { Resolver } from "node:dns/promises";
import { OutboundRefused, type SafeFetch } from "../../lib/safe-fetch.js";
import type { CheckOutcome, VerificationMethod } from "./store.js";

/**
 * What a domain must publish, and the two ways of looking (spec "Certificates and domain
 * verification"): a DNS TXT record at `_<service>-challenge.<domain>` whose value is
 * `<service>-domain-verification=<token>`, or the token as the body of
 * `https://<domain>/.well-known/<service>-domain-verification.txt`. The DNS answer comes from
 * the configured resolvers (DNS_RESOLVER_SERVERS) and the file through the one guarded fetcher
 * (lib/safe-fetch.ts: public addresses only, no redirects, a deadline and a size cap).
 */

/** dns: the record's name and value; https: where the file goes and what it holds. */
export type DomainChallenge = { method: "dns"; name: string; value: string } | { method: "https"; url: string; content: string };

export interface ChallengeSettings {
  /** SIGMA_SERVICE_NAME: names the record and the file. */
  serviceName: string;
  /** DOMAIN_VERIFICATION_HTTPS_PORT: 443 but in tests. */
  httpsPort: number;
}

export function challengeFor(settings: ChallengeSettings, record: { method: VerificationMethod; domain: string; token: string }): DomainChallenge {
  const { serviceName } = settings;
  if (record.method === "dns") {
    return { method: "dns", name: `_${serviceName}-challenge.${record.domain}`, value: `${serviceName}-domain-verification=${record.token}` };
  }
  const port = settings.httpsPort === 443 ? "" : `:${settings.httpsPort}`;
  return { method: "https", url: `https://${record.domain}${port}/.well-known/${serviceName}-domain-verification.txt`, content: record.token };
}

export interface DomainChecks {
  check(challenge: DomainChallenge): Promise<CheckOutcome>;
}

/** Largest well-known file read: a token and a line end, with room to spare. */
const MAX_FILE_BYTES = 4096;

export function domainChecks(options: { resolverServers: readonly string[]; safeFetch: SafeFetch }): DomainChecks {
  // Its own resolver, so tests (and operators) can point it at chosen servers; empty: the system's.
  const resolver = new Resolver({ timeout: 3000, tries: 2 });
  if (options.resolverServers.length) resolver.setServers([...options.resolverServers]);

  async function checkDns(name: string, value: string): Promise<CheckOutcome> {
    let records: string[][];
    try {
      records = await resolver.resolveTxt(name);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === "ENOTFOUND" || code === "ENODATA") return { ok: false, reason: `There is no TXT record at ${name}.` };
      return { ok: false, reason: `The DNS lookup of ${name} failed (${code ?? "error"}); try again shortly.` };
    }
    // RFC 7208 §3.3 style: a TXT record's strings are one value, split only for length.
    if (records.some((chunks) => chunks.join("") === value)) return { ok: true };
    return { ok: false, reason: `The TXT records at ${name} do not include ${value}.` };
  }

  async function checkHttps(url: string, content: string): Promise<CheckOutcome> {
    let res: Response;
    try {
      res = await options.safeFetch(url, { headers: { accept: "text/plain" } });
    } catch (err) {
      if (err instanceof OutboundRefused) return { ok: false, reason: `${url} was not fetched: ${err.message}.` };
      return { ok: false, reason: `${url} could not be fetched (${(err as { code?: string }).code ?? "connection failed"}).` };
    }
    if (res.status >= 300 && res.status < 400) return { ok: false, reason: `${url} answered a redirect (${res.status}); redirects are not followed.` };
    if (res.status !== 200) return { ok: false, reason: `${url} answered HTTP ${res.status}.` };
    const body = await res.text();
    if (body.length <= MAX_FILE_BYTES && body.trim() === content) return { ok: true };
    return { ok: false, reason: `${url} does not hold the token.` };
  }

  return {
    check(challenge) {
      return challenge.method === "dns" ? checkDns(challenge.name, challenge.value) : checkHttps(challenge.url, challenge.content);
    },
  };
}

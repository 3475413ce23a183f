import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * Which addresses a server-side request may reach: public unicast only (OWASP ASVS 5.0
 * V1.3.6 / OWASP SSRF Prevention Cheat Sheet: allow-list the destination, after resolution).
 * Parsing and the special-purpose ranges (IANA's registries, RFC 6890 and its updates) are
 * ipaddr.js's; what is refused, and why, is decided here. Every IPv6 form that carries an IPv4
 * address is judged by that address first; the forms no public server is reached at (SIIT,
 * IPv4-compatible, local-use NAT64, Teredo) are refused whatever they carry.
 */

type V4 = ipaddr.IPv4;
type V6 = ipaddr.IPv6;

/** ipaddr.js's IPv4 range names, in our words. Any range but `unicast` is refused. */
const V4_REASONS: Readonly<Record<string, string>> = {
  unspecified: "this network / unspecified (RFC 791)",
  broadcast: "limited broadcast (RFC 919)",
  multicast: "multicast (RFC 5771)",
  linkLocal: "link-local (RFC 3927)",
  loopback: "loopback (RFC 1122)",
  carrierGradeNat: "shared address space / CGNAT (RFC 6598)",
  private: "private (RFC 1918)",
  reserved: "reserved: IETF protocol assignments, documentation, benchmarking, 6to4 relay or class E (RFC 6890)",
};

/** The same for IPv6 (the IPv4-carrying ranges are handled before this table is read). */
const V6_REASONS: Readonly<Record<string, string>> = {
  unspecified: "unspecified (RFC 4291)",
  loopback: "loopback (RFC 4291)",
  linkLocal: "link-local (RFC 4291)",
  multicast: "multicast (RFC 4291)",
  uniqueLocal: "unique local (RFC 4193)",
  deprecatedSiteLocal: "site-local (RFC 3879)",
  discard: "discard-only (RFC 6666)",
  benchmarking: "benchmarking (RFC 5180)",
  segmentRouting: "segment routing SIDs (RFC 9602)",
  reserved: "IETF protocol assignments or documentation (RFC 2928, RFC 3849, RFC 9637)",
};

const cidr = (text: string) => ipaddr.IPv6.parseCIDR(text);
const GLOBAL_UNICAST = cidr("2000::/3");

/**
 * The IPv6 forms that carry an IPv4 address: where it sits, and whether a public one may be
 * reached through the form. `v4` gets the 16 address bytes.
 */
const EMBEDDINGS: readonly { name: string; range: [V6, number]; v4: (b: number[]) => number[]; reachable: boolean; note: string }[] = [
  // RFC 4291 §2.5.5.2: a dual-stack socket dials the IPv4 address itself.
  { name: "IPv4-mapped IPv6", range: cidr("::ffff:0:0/96"), v4: (b) => b.slice(12), reachable: true, note: "RFC 4291 §2.5.5.2" },
  // RFC 2765 (SIIT) ::ffff:0:a.b.c.d, obsoleted by RFC 6052: a translator on the path dials it.
  { name: "IPv4-translated IPv6", range: cidr("::ffff:0:0:0/96"), v4: (b) => b.slice(12), reachable: false, note: "RFC 2765, not globally routable" },
  // RFC 4291 §2.5.5.1 ::a.b.c.d, deprecated (:: and ::1 are classified before).
  { name: "IPv4-compatible IPv6", range: cidr("::/96"), v4: (b) => b.slice(12), reachable: false, note: "deprecated, RFC 4291 §2.5.5.1" },
  // RFC 6052 well-known NAT64 prefix: globally reachable, translated to the IPv4 address.
  { name: "NAT64", range: cidr("64:ff9b::/96"), v4: (b) => b.slice(12), reachable: true, note: "RFC 6052" },
  // RFC 8215 local-use NAT64 (a /96 inside it carries the address last, RFC 6052 §2.2).
  { name: "local-use NAT64", range: cidr("64:ff9b:1::/48"), v4: (b) => b.slice(12), reachable: false, note: "RFC 8215, not globally routable" },
  // RFC 3056 6to4: 2002:a.b.c.d::/48, relayed to that IPv4 host.
  { name: "6to4", range: cidr("2002::/16"), v4: (b) => b.slice(2, 6), reachable: true, note: "RFC 3056" },
  // RFC 4380 §4 Teredo: the client's IPv4 address, inverted, in the last 32 bits. The host
  // sits behind a NAT and is reached through an IPv4 relay: no server of ours lives there.
  { name: "Teredo", range: cidr("2001::/32"), v4: (b) => b.slice(12).map((x) => ~x & 0xff), reachable: false, note: "RFC 4380, tunnelled over IPv4" },
];

function v4Reason(address: V4): string | null {
  const range = address.range();
  return range === "unicast" ? null : (V4_REASONS[range] ?? `special-purpose IPv4 (${range})`);
}

function v6Reason(address: V6): string | null {
  const bytes = address.toByteArray();
  const range = address.range();
  // :: and ::1 lie inside ::/96; they are themselves, not IPv4-compatible addresses.
  if (range === "unspecified" || range === "loopback") return V6_REASONS[range]!;
  const form = EMBEDDINGS.find((e) => address.match(e.range));
  if (form) {
    const carried = new ipaddr.IPv4(form.v4(bytes));
    const reason = v4Reason(carried);
    if (reason) return `${form.name} of ${carried.toString()}: ${reason}`;
    return form.reachable ? null : `${form.name} (${form.note})`;
  }
  if (range !== "unicast") return V6_REASONS[range] ?? `special-purpose IPv6 (${range})`;
  // RFC 4291 §2.4: outside 2000::/3 nothing is assigned as global unicast (IANA address space).
  if (!address.match(GLOBAL_UNICAST)) return "not global unicast (outside 2000::/3, RFC 4291 §2.4)";
  return null;
}

/**
 * The address as the WHATWG URL parser spells it (all hex, RFC 5952), which is how the request
 * itself names it: ipaddr.js reads a deprecated `::a.b.c.d` as `::ffff:a.b.c.d`, so a
 * dotted tail must not reach it. A zone (`fe80::1%eth0`) is no URL host: left as it is.
 */
function hexSpelling(ip: string): string {
  try {
    return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return ip;
  }
}

/**
 * Why `ip` must not be reached, or null when it is a public unicast address. Anything that is
 * not an IP address literal (Node's strict parser decides) is refused: fail closed.
 */
export function nonPublicReason(ip: string): string | null {
  const bare = ip.replace(/^\[|\]$/g, "");
  try {
    if (isIP(ip) === 4) return v4Reason(ipaddr.IPv4.parse(ip));
    if (isIP(bare) === 6) return v6Reason(ipaddr.IPv6.parse(hexSpelling(bare)));
  } catch {
    // Node and ipaddr.js disagree on the spelling: not an address we will dial.
  }
  return "not an IP address";
}

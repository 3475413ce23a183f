import { isIPv4, isIPv6 } from "node:net";

/**
 * Which addresses a server-side request may reach: public unicast only (OWASP ASVS 5.0
 * V1.3.6 / OWASP SSRF Prevention Cheat Sheet: allow-list the destination, after resolution).
 * The ranges are IANA's special-purpose registries (RFC 6890 and its updates). IPv6 forms that
 * carry an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by that IPv4 address.
 */

type Range = readonly [prefix: readonly number[], bits: number, reason: string];

const V4_RANGES: readonly Range[] = [
  [[0], 8, "this network / unspecified (RFC 791)"],
  [[10], 8, "private (RFC 1918)"],
  [[100, 64], 10, "shared address space / CGNAT (RFC 6598)"],
  [[127], 8, "loopback (RFC 1122)"],
  [[169, 254], 16, "link-local (RFC 3927)"],
  [[172, 16], 12, "private (RFC 1918)"],
  [[192, 0, 0], 24, "IETF protocol assignments (RFC 6890)"],
  [[192, 0, 2], 24, "documentation (RFC 5737)"],
  [[192, 88, 99], 24, "6to4 relay anycast (RFC 7526)"],
  [[192, 168], 16, "private (RFC 1918)"],
  [[198, 18], 15, "benchmarking (RFC 2544)"],
  [[198, 51, 100], 24, "documentation (RFC 5737)"],
  [[203, 0, 113], 24, "documentation (RFC 5737)"],
  [[224], 4, "multicast (RFC 5771)"],
  [[240], 4, "reserved / broadcast (RFC 1112, RFC 919)"],
];

const V6_RANGES: readonly Range[] = [
  [[0x01, 0x00, 0, 0, 0, 0, 0, 0], 64, "discard-only (RFC 6666)"],
  [[0x20, 0x01, 0x0d, 0xb8], 32, "documentation (RFC 3849)"],
  [[0x20, 0x01, 0x00], 23, "IETF protocol assignments, Teredo included (RFC 2928, RFC 4380)"],
  [[0xfc], 7, "unique local (RFC 4193)"],
  [[0xfe, 0x80], 10, "link-local (RFC 4291)"],
  [[0xfe, 0xc0], 10, "site-local (RFC 3879)"],
  [[0xff], 8, "multicast (RFC 4291)"],
];

function inRange(bytes: readonly number[], [prefix, bits]: Range): boolean {
  for (let i = 0; i < bits; i += 8) {
    const take = Math.min(8, bits - i);
    const mask = (0xff << (8 - take)) & 0xff;
    if (((bytes[i / 8] ?? 0) & mask) !== ((prefix[i / 8] ?? 0) & mask)) return false;
  }
  return true;
}

function v4Bytes(ip: string): number[] {
  return ip.split(".").map(Number);
}

/** The 16 bytes of an IPv6 address (`::` and a trailing dotted quad allowed); caller checked isIPv6. */
function v6Bytes(ip: string): number[] {
  const bare = ip.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  let text = bare;
  const tail: number[] = [];
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad) {
    tail.push(...v4Bytes(quad[1]!));
    text = text.slice(0, -quad[1]!.length) + "0:0";
  }
  const [head, rest] = text.includes("::") ? text.split("::") : [text, undefined];
  const groups = (s: string | undefined) => (s ? s.split(":").filter((g) => g !== "") : []);
  const left = groups(head);
  const right = groups(rest);
  const all = rest === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
  const bytes = all.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 0xff];
  });
  if (quad) bytes.splice(12, 4, ...tail);
  return bytes;
}

function classifyV4(bytes: readonly number[]): string | null {
  return V4_RANGES.find((r) => inRange(bytes, r))?.[2] ?? null;
}

/**
 * Why `ip` must not be reached, or null when it is a public unicast address. Anything that is
 * not an IP address literal is refused (fail closed).
 */
export function nonPublicReason(ip: string): string | null {
  if (isIPv4(ip)) return classifyV4(v4Bytes(ip));
  const bare = ip.replace(/^\[|\]$/g, "");
  if (!isIPv6(bare)) return "not an IP address";
  const b = v6Bytes(bare);
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (zeros(0, 16)) return "unspecified (RFC 4291)";
  if (zeros(0, 15) && b[15] === 1) return "loopback (RFC 4291)";
  const embedded = (why: string, v4: number[]) => {
    const reason = classifyV4(v4);
    return reason ? `${why} of ${reason}` : null;
  };
  // ::ffff:a.b.c.d (mapped, RFC 4291 §2.5.5.2) and ::a.b.c.d (compatible, deprecated, §2.5.5.1).
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return embedded("IPv4-mapped IPv6", b.slice(12));
  if (zeros(0, 12)) return "IPv4-compatible IPv6 (deprecated, RFC 4291)";
  // 64:ff9b::/96 NAT64 (RFC 6052) and 64:ff9b:1::/48 local-use NAT64 (RFC 8215).
  if (inRange(b, [[0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], 96, ""])) return embedded("NAT64", b.slice(12));
  if (inRange(b, [[0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48, ""])) return "local-use NAT64 (RFC 8215)";
  // 2002:a.b.c.d::/48, 6to4 (RFC 3056).
  if (b[0] === 0x20 && b[1] === 0x02) return embedded("6to4", b.slice(2, 6));
  return V6_RANGES.find((r) => inRange(b, r))?.[2] ?? null;
}

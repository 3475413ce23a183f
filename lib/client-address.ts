import { isIP } from "node:net";

/**
 * The client's address behind `hops` reverse proxies we run. Each proxy appends the address it
 * received the request from to X-Forwarded-For, so only the last `hops` entries were written by
 * us: the one `hops` from the right is the client as our outermost proxy saw it. Everything to
 * its left came from the client and may be anything (the leftmost entry is whatever the client
 * sent), so it never keys a rate limit or a session's address (OWASP ASVS 4.0 V4.x: do not trust
 * client-supplied forwarding headers). With no hops, fewer entries than hops, or an entry that
 * is not an IP address, the socket's peer address decides.
 */
export function clientAddress(forwardedFor: string | string[] | undefined, socketAddress: string | undefined, hops: number): string {
  const peer = socketAddress || "unknown";
  if (hops <= 0 || !forwardedFor) return peer;
  const entries = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor).split(",").map((e) => e.trim());
  const chosen = entries.length >= hops ? entries[entries.length - hops] : undefined;
  return chosen && isIP(chosen) ? chosen : peer;
}

/** Name of the header our server fills with the peer address; better-auth's rate limiter keys on it. */
export const CLIENT_IP_HEADER = "x-idp-client-ip";

/** Where better-auth's account surface and the OAuth endpoints are mounted ({base_url} of the spec). */
export const BASE_PATH = "/api/auth";
/** Name of the header our server fills with the peer address; better-auth's rate limiter keys on it. */
export const CLIENT_IP_HEADER = "x-idp-client-ip";

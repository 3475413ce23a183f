/**
 * Resuming an authorization request after key sign-in.
 *
 * better-auth resumes the flow by itself when a sign-in request's body carries `oauth_query`
 * (a before-hook stores it, an after-hook reruns authorize once the session cookie is set).
 * Key sign-in cannot carry it: its body is exactly the signed `{"bapId":"..."}`. So once the
 * cookie is set the page calls `POST /oauth2/continue {postLogin: true, oauth_query}`, which
 * verifies the signed query and reruns authorize for the new session: consent, or straight
 * back to the client with a code.
 *
 * `continue` does not know the session was made just now, so a request that demands a fresh
 * login (`prompt=login`, a `max_age` it cannot prove) is sent back to the sign-in page. For
 * those the page reissues the original request without `prompt=login` and `max_age`: the
 * person has just authenticated, and the code's `auth_time` is that new session's creation
 * time, which is what the client asked for (OIDC Core §3.1.2.1).
 */

export interface FlowPaths {
  /** POST endpoint that resumes a signed authorization request. */
  continuePath: string;
  /** The authorization endpoint, for a request that needs a fresh login. */
  authorizePath: string;
  /** Our sign-in page: where authorize sends a request it still wants a login for. */
  signInPath: string;
}

/** The parameters @better-auth/oauth-provider adds when it signs a request (signed-query.ts). */
const SIGNING_PARAMS = ["sig", "exp", "ba_iat", "ba_param", "ba_pl"];

/** Where the browser goes next: the continued flow's answer, or the reissued request. */
export async function continueAuthorization(oauthQuery: string, paths: FlowPaths): Promise<string> {
  const res = await fetch(paths.continuePath, {
    method: "POST",
    credentials: "same-origin",
    cache: "no-store",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ postLogin: true, oauth_query: oauthQuery }),
  });
  const data = (await res.json().catch(() => null)) as { url?: unknown; redirect_uri?: unknown } | null;
  const next = typeof data?.url === "string" ? data.url : typeof data?.redirect_uri === "string" ? data.redirect_uri : null;
  if (!res.ok || !next) throw new Error("the authorization request could not be continued");
  const target = new URL(next, location.href);
  if (target.origin === location.origin && target.pathname === paths.signInPath) return freshLoginRequest(oauthQuery, paths.authorizePath);
  return target.href;
}

/** The original authorization request, minus the signing parameters and the fresh-login demands. */
export function freshLoginRequest(oauthQuery: string, authorizePath: string): string {
  const params = new URLSearchParams(oauthQuery);
  for (const name of SIGNING_PARAMS) params.delete(name);
  params.delete("max_age");
  const prompts = (params.get("prompt") ?? "").split(" ").filter((p) => p && p !== "login");
  if (prompts.length) params.set("prompt", prompts.join(" "));
  else params.delete("prompt");
  return `${authorizePath}?${params}`;
}

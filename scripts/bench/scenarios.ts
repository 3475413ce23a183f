import type autocannon from "autocannon";

/** The routes measured, in order; the reference serves the four it has (REFERENCE_ROUTES). */
export const ROUTES = ["discovery", "jwks", "get-session", "userinfo", "introspect", "refresh"] as const;
export type RouteName = (typeof ROUTES)[number];
export const REFERENCE_ROUTES: readonly RouteName[] = ["discovery", "jwks", "introspect", "refresh"];

/** What one server's scenarios need: its paths, and the credentials and tokens set up on it. */
export interface Target {
  paths: { discovery: string; jwks: string; introspect: string; token: string; getSession?: string; userinfo?: string };
  /** Basic credentials of the client that introspects its own access token. */
  basic: string;
  accessToken: string;
  /** When given, introspection requests go to these clients in turn (each asks about its own token). */
  introspectors?: { basic: string; accessToken: string }[];
  /** The session cookie get-session reads (ours only). */
  cookie?: string;
  /** When given, get-session requests carry these sessions' cookies in turn. */
  cookies?: string[];
  /** Refresh chains for one round, and the Basic credentials of the client they belong to. */
  refreshBasic: string;
  refreshTokens: string[];
}

export interface Scenario {
  name: RouteName;
  path: string;
  options: Partial<autocannon.Options>;
  /** Checks a 2xx body; a false counts as a failure of the run. */
  verify?: (body: string) => boolean;
}

const form = (o: Record<string, string>) => new URLSearchParams(o).toString();

export function scenarios(t: Target): Scenario[] {
  // The refresh pool: a token leaves the pool when a request is built with it, and the
  // token that request is answered with goes back in. Tokens are never sent twice.
  const pool = [...t.refreshTokens];
  const list: Scenario[] = [
    { name: "discovery", path: t.paths.discovery, options: { method: "GET" }, verify: (b) => b.includes('"issuer"') },
    { name: "jwks", path: t.paths.jwks, options: { method: "GET" }, verify: (b) => b.includes('"keys"') },
  ];
  if (t.paths.getSession && t.cookie) {
    list.push({
      name: "get-session",
      path: t.paths.getSession,
      // autocannon sends a connection's requests in turn, so each connection rotates over the sessions.
      options: { requests: (t.cookies?.length ? t.cookies : [t.cookie]).map((cookie) => ({ method: "GET", path: t.paths.getSession!, headers: { cookie } })) as any },
      verify: (b) => b.includes('"session"') && b.includes('"user"'),
    });
  }
  if (t.paths.userinfo) {
    // The introspecting clients' access tokens in turn: one token past the shipped 5,000 a second meets its limit.
    const bearers = (t.introspectors?.length ? t.introspectors : [{ accessToken: t.accessToken }]).map(({ accessToken }) => ({ method: "GET", path: t.paths.userinfo!, headers: { authorization: `Bearer ${accessToken}` } }));
    list.push({ name: "userinfo", path: t.paths.userinfo, options: { requests: bearers as any }, verify: (b) => b.includes('"sub"') });
  }
  list.push(
    {
      name: "introspect",
      path: t.paths.introspect,
      options: introspection(t),
      verify: (b) => b.includes('"active":true'),
    },
    {
      name: "refresh",
      path: t.paths.token,
      options: {
        requests: [
          {
            method: "POST",
            path: t.paths.token,
            headers: { authorization: t.refreshBasic, "content-type": "application/x-www-form-urlencoded" },
            setupRequest: (req: any) => {
              // An empty pool (chains lost to failures) sends a bogus token: a 4xx, so the row is invalid.
              const token = pool.shift() ?? "pool-ran-dry";
              return { ...req, body: form({ grant_type: "refresh_token", refresh_token: token }) };
            },
            onResponse: (status: number, body: string) => {
              if (status !== 200) return;
              try {
                const next = JSON.parse(body).refresh_token;
                if (typeof next === "string") pool.push(next);
              } catch {
                /* counted by verify */
              }
            },
          },
        ] as any,
      },
      // A new pair: both tokens in a 200 (rotation on both servers, so the refresh token is new).
      verify: (b) => b.includes('"access_token"') && b.includes('"refresh_token"'),
    },
  );
  return list;
}

/** One client asking about its token, or several in turn (Target.introspectors). */
function introspection(t: Target): Partial<autocannon.Options> {
  const askers = t.introspectors?.length ? t.introspectors : [{ basic: t.basic, accessToken: t.accessToken }];
  const requests = askers.map(({ basic, accessToken }) => ({
    method: "POST",
    path: t.paths.introspect,
    headers: { authorization: basic, "content-type": "application/x-www-form-urlencoded" },
    body: form({ token: accessToken, token_type_hint: "access_token" }),
  }));
  // autocannon sends a connection's requests in turn, so each connection rotates over the clients.
  return { requests: requests as any };
}

import { createHash, randomBytes } from "node:crypto";
import { parseJsonOrNull } from "../../lib/json.js";

/** What the bench's client sets up on our server: a person, clients, tokens (scripts/soak.ts shares it). */
const REDIRECT = "https://client.example/callback";

function cookiesOf(headers: Headers): string {
  return headers
    .getSetCookie()
    .map((c) => c.split(";")[0]!)
    .filter((c) => !c.endsWith("="))
    .join("; ");
}

/**
 * A request of the bench's clients. It carries an `Origin` as a browser's page would, unless
 * `backChannel` is set: a relying party's server calling the token, userinfo or introspection
 * endpoint (openid-client, say) sends none.
 */
export type CallInit = { method?: string; body?: unknown; form?: Record<string, string>; cookie?: string; headers?: Record<string, string>; signal?: AbortSignal; backChannel?: boolean };
export type CallResult = Awaited<ReturnType<typeof call>>;

export async function call(base: string, path: string, init: CallInit = {}) {
  const headers: Record<string, string> = { ...(init.backChannel ? {} : { origin: base }), ...init.headers };
  if (init.cookie) headers.cookie = init.cookie;
  let body: string | undefined;
  if (init.form) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(init.form).toString();
  } else if (init.body !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(init.body);
  }
  const res = await fetch(base + path, { method: init.method ?? (body ? "POST" : "GET"), headers, body, redirect: "manual", signal: init.signal });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: parseJsonOrNull(text) as any, text };
}

function must(cond: unknown, what: string, res?: { status: number; text: string }): asserts cond {
  if (!cond) throw new Error(`bench setup: ${what}${res ? ` (${res.status} ${res.text.slice(0, 300)})` : ""}`);
}

export interface Fixture {
  cookie: string;
  /** Sessions of the same person, get-session's in turn. */
  cookies: string[];
  /** The client that introspects (its id; `basic` is its credentials). */
  clientId: string;
  /** The client that introspects and whose access token userinfo reads. */
  basic: string;
  accessToken: string;
  /**
   * Clients that introspect, each with its own access token (the first is `basic` and
   * `accessToken`): the shipped `client` limit is 5,000 requests a second per client, which one
   * client at full speed would pass, so the bench spreads introspection over several, as
   * several resource servers would.
   */
  introspectors: { basic: string; accessToken: string }[];
  /** Refresh chains for one round of the refresh scenario, and the client they belong to. */
  refreshBasic: string;
  refreshTokens: string[];
  /**
   * New chains under a newly registered client, for the next round. A refresh run ends
   * with requests cut off mid-flight (rotated on the server, the answer never read), and
   * the fixture's own access token must not share a family (client + user) with chains
   * that rotation or reuse detection may revoke.
   */
  newChains(count: number): Promise<{ basic: string; tokens: string[] }>;
}

/**
 * One authorization code flow (PKCE S256, confidential client) for the signed-in `cookie`:
 * authorize, consent when asked, code exchange. `send` makes each request (scripts/soak.ts
 * times them); a step that does not answer as expected throws.
 */
export async function authorizationCodeFlow(base: string, cookie: string, { clientId, basic }: { clientId: string; basic: string }, send: (base: string, path: string, init?: CallInit) => Promise<CallResult> = call) {
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const params = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT,
    scope: "openid profile email offline_access",
    state: randomBytes(8).toString("hex"),
    nonce: randomBytes(8).toString("hex"),
    code_challenge: challenge,
    code_challenge_method: "S256",
  });
  let res = await send(base, `/api/auth/oauth2/authorize?${params}`, { cookie });
  const next = (r: typeof res) => (r.status >= 300 && r.status < 400 ? r.headers.get("location") : (r.json?.url ?? r.json?.redirect_uri ?? null));
  let location: string | null = next(res);
  if (location?.startsWith("/consent")) {
    res = await send(base, "/api/auth/oauth2/consent", { cookie, body: { accept: true, oauth_query: new URL(location, base).search.slice(1) } });
    location = next(res);
  }
  must(location, "authorize redirect", res);
  const code = new URL(location, base).searchParams.get("code");
  must(code, `authorization code in ${location}`);
  const tok = await send(base, "/api/auth/oauth2/token", {
    backChannel: true,
    headers: { authorization: basic },
    form: { grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: verifier },
  });
  must(tok.status === 200 && tok.json?.access_token && tok.json?.refresh_token, "code exchange", tok);
  return tok.json as { access_token: string; refresh_token: string };
}

export async function setUp(base: string, refreshChains: number, introspectors = 8, sessions = 16): Promise<Fixture> {
  const email = `bench-${Date.now().toString(36)}@example.com`;
  const signUp = await call(base, "/api/auth/sign-up/email", { body: { name: "Bench Person", email, password: "correct horse battery staple" } });
  must(signUp.status === 200, "sign-up", signUp);
  const cookie = cookiesOf(signUp.headers);
  // get-session spreads over sessions as introspection over clients: one session past the
  // shipped 5,000 requests a second meets its limit, as it should.
  const cookies = [cookie];
  while (cookies.length < sessions) {
    const signIn = await call(base, "/api/auth/sign-in/email", { body: { email, password: "correct horse battery staple" } });
    must(signIn.status === 200, "sign-in", signIn);
    cookies.push(cookiesOf(signIn.headers));
  }

  const register = async () => {
    // Registered without the session: a signed-in person's clients count against their tier's
    // limit (free: one), and a refresh run registers a new client per round.
    const reg = await call(base, "/api/auth/oauth2/register", {
      body: {
        client_name: "Bench App",
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: "client_secret_basic",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      },
    });
    must(reg.status === 201 && reg.json?.client_secret, "client registration", reg);
    const clientId: string = reg.json.client_id;
    return { clientId, basic: "Basic " + Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(reg.json.client_secret)}`).toString("base64") };
  };

  const codeFlow = (client: { clientId: string; basic: string }) => authorizationCodeFlow(base, cookie, client);

  const newChains = async (count: number) => {
    const client = await register();
    const tokens: string[] = [];
    while (tokens.length < count) tokens.push((await codeFlow(client)).refresh_token);
    return { basic: client.basic, tokens };
  };
  const main = await register();
  const first = await codeFlow(main);
  const others: { basic: string; accessToken: string }[] = [];
  while (others.length < introspectors - 1) {
    const client = await register();
    others.push({ basic: client.basic, accessToken: (await codeFlow(client)).access_token });
  }
  const chains = await newChains(refreshChains);
  return {
    cookie,
    cookies,
    clientId: main.clientId,
    basic: main.basic,
    accessToken: first.access_token,
    introspectors: [{ basic: main.basic, accessToken: first.access_token }, ...others],
    refreshBasic: chains.basic,
    refreshTokens: chains.tokens,
    newChains,
  };
}


import { createHash, randomBytes } from "node:crypto";
import { cookiesOf, postForm, uniqueEmail, type TestServer } from "./server.js";

export const REDIRECT = "http://127.0.0.1:9999/callback";

export function pkce() {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

export async function signUp(server: TestServer, opts: { email?: string; password?: string; name?: string } = {}) {
  const email = opts.email ?? uniqueEmail();
  const password = opts.password ?? "correct horse battery staple";
  const res = await server.api("/api/auth/sign-up/email", { body: { name: opts.name ?? "Test Person", email, password } });
  if (res.status !== 200) throw new Error(`sign-up failed: ${res.status} ${res.text}`);
  return { email, password, cookie: cookiesOf(res.headers), user: res.json.user as { id: string; email: string }, token: res.json.token as string };
}

export async function registerClient(server: TestServer, metadata: Record<string, unknown> = {}) {
  const res = await server.api("/api/auth/oauth2/register", {
    body: {
      client_name: "Test App",
      application_type: "native",
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      ...metadata,
    },
  });
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${res.text}`);
  return res.json as { client_id: string; client_secret?: string; [k: string]: unknown };
}

export function authorizeUrl(server: TestServer, params: Record<string, string>) {
  return `/api/auth/oauth2/authorize?${new URLSearchParams(params)}`;
}

/** Where the authorize endpoint (or a step after it) sends the browser next. */
function nextUrl(res: { status: number; headers: Headers; json: any }): string | null {
  if (res.status >= 300 && res.status < 400) return res.headers.get("location");
  return typeof res.json?.url === "string" ? res.json.url : typeof res.json?.redirect_uri === "string" ? res.json.redirect_uri : null;
}

/**
 * An authorization request as a native app builds it: PKCE S256, state and nonce. `url` is
 * where a browser is sent; `verifier` is for the token exchange.
 */
export function authorizationRequest(
  server: TestServer,
  clientId: string,
  opts: { redirectUri?: string; scope?: string; extra?: Record<string, string> } = {},
) {
  const { verifier, challenge } = pkce();
  const state = randomBytes(12).toString("base64url");
  const nonce = randomBytes(12).toString("base64url");
  const params: Record<string, string> = {
    response_type: "code",
    client_id: clientId,
    redirect_uri: opts.redirectUri ?? REDIRECT,
    scope: opts.scope ?? "openid profile email offline_access",
    state,
    nonce,
    code_challenge: challenge,
    code_challenge_method: "S256",
    ...opts.extra,
  };
  return { url: `${server.url}${authorizeUrl(server, params)}`, params, verifier, state, nonce };
}

/**
 * Runs authorize for a signed-in user over the API (the browser test drives the pages):
 * follows the consent step with Allow (or Deny) and returns the final redirect.
 */
export async function authorize(
  server: TestServer,
  opts: { clientId: string; cookie: string; scope?: string; redirectUri?: string; challenge?: string; extra?: Record<string, string>; consent?: boolean },
) {
  // A caller that holds its own verifier passes the challenge; it replaces the generated one.
  const extra = opts.challenge ? { code_challenge: opts.challenge, ...opts.extra } : opts.extra;
  const { params, state, nonce } = authorizationRequest(server, opts.clientId, { ...opts, extra });
  let res = await server.api(authorizeUrl(server, params), { cookie: opts.cookie });
  let location = nextUrl(res);
  if (location?.startsWith("/consent")) {
    const query = new URL(location, server.url).search.slice(1);
    res = await server.api("/api/auth/oauth2/consent", { cookie: opts.cookie, body: { accept: opts.consent ?? true, oauth_query: query } });
    location = nextUrl(res);
  }
  if (!location) throw new Error(`authorize did not redirect: ${res.status} ${JSON.stringify(res.json)}`);
  const url = new URL(location, server.url);
  return { url, code: url.searchParams.get("code"), state, nonce, params };
}

export async function token(server: TestServer, form: Record<string, string>, headers: Record<string, string> = {}) {
  return postForm(server, "/api/auth/oauth2/token", form, headers);
}

/** Sign up, register a public client, authorize with PKCE and exchange the code. */
export async function fullCodeFlow(server: TestServer, opts: { scope?: string } = {}) {
  const person = await signUp(server);
  const client = await registerClient(server);
  const { verifier, challenge } = pkce();
  const auth = await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge, scope: opts.scope });
  const tokens = await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier });
  return { person, client, auth, verifier, tokens };
}

import { beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { authorize, authorizeUrl, pkce, REDIRECT, registerClient, signUp, token } from "../helpers/oauth.js";
import { startTestServer } from "../helpers/server.js";

const server = useTestServer();
let person: Awaited<ReturnType<typeof signUp>>;
let client: Awaited<ReturnType<typeof registerClient>>;

beforeAll(async () => {
  person = await signUp(server);
  client = await registerClient(server);
});

const base = () => ({
  response_type: "code",
  client_id: client.client_id,
  redirect_uri: REDIRECT,
  scope: "openid profile",
  state: "state-123",
});

/** Where the server sends the browser: a 30x Location or the JSON `url` it gives fetch clients. */
async function authorizeTarget(params: Record<string, string>) {
  const res = await server.api(authorizeUrl(server, params), { cookie: person.cookie, headers: { accept: "text/html" } });
  const location = res.status >= 300 && res.status < 400 ? res.headers.get("location") : (res.json?.url ?? null);
  return { res, url: location ? new URL(location, server.url) : null };
}

async function tokenCount(): Promise<number> {
  const row = await server.db.selectFrom("oauthAccessToken").select((eb) => eb.fn.countAll().as("n")).where("clientId", "=", client.client_id).executeTakeFirst();
  return Number(row?.n ?? 0);
}

describe("authorize request errors", () => {
  it("refuses a request without PKCE, at the client's redirect URI", async () => {
    const { url } = await authorizeTarget(base());
    expect(url?.origin + url!.pathname).toBe(REDIRECT);
    expect(url!.searchParams.get("error")).toBe("invalid_request");
    expect(url!.searchParams.get("state")).toBe("state-123");
    expect(url!.searchParams.get("code")).toBeNull();
  });

  it("refuses the plain PKCE method", async () => {
    const { url } = await authorizeTarget({ ...base(), code_challenge: pkce().verifier, code_challenge_method: "plain" });
    expect(url!.searchParams.get("error")).toBe("invalid_request");
    expect(url!.searchParams.get("code")).toBeNull();
  });

  it("shows an error page, never a redirect, for an unknown client", async () => {
    const { url } = await authorizeTarget({ ...base(), client_id: "no-such-client", code_challenge: pkce().challenge, code_challenge_method: "S256" });
    expect(url!.origin).toBe(server.url);
    expect(url!.pathname).toBe("/error");
    expect(url!.searchParams.get("error")).toBe("invalid_client");
  });

  it("shows an error page for a redirect URI that does not match exactly", async () => {
    for (const redirect of [REDIRECT + "/extra", REDIRECT + "?x=1", "http://127.0.0.1:9999/other", "https://evil.example/callback"]) {
      const { url } = await authorizeTarget({ ...base(), redirect_uri: redirect, code_challenge: pkce().challenge, code_challenge_method: "S256" });
      expect(url!.origin, redirect).toBe(server.url);
      expect(url!.pathname).toBe("/error");
    }
  });

  it("renders the error page as HTML with the error code, in our own words", async () => {
    const res = await server.api("/error?error=invalid_client&error_description=unknown%20client");
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.text).toContain("invalid_client");
    expect(res.text).not.toContain("unknown client");
  });
});

describe("token request errors", () => {
  async function freshCode() {
    const { verifier, challenge } = pkce();
    const result = await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge, scope: "openid profile" });
    expect(result.code).toBeTruthy();
    return { code: result.code!, verifier };
  }

  it("refuses a wrong code verifier and issues nothing", async () => {
    const before = await tokenCount();
    const { code } = await freshCode();
    const res = await token(server, { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: pkce().verifier });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ error: "invalid_grant" });
    expect(typeof res.json.error_description).toBe("string");
    expect(res.json.access_token).toBeUndefined();
    expect(await tokenCount()).toBe(before);
  });

  it("refuses a missing code verifier", async () => {
    const { code } = await freshCode();
    const res = await token(server, { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: client.client_id });
    expect(res.status).toBe(400);
    expect(["invalid_request", "invalid_grant"]).toContain(res.json.error);
    expect(res.json.access_token).toBeUndefined();
  });

  it("refuses a redirect URI that differs from the authorization request", async () => {
    const { code, verifier } = await freshCode();
    const res = await token(server, { grant_type: "authorization_code", code, redirect_uri: "http://127.0.0.1:9999/other", client_id: client.client_id, code_verifier: verifier });
    expect(res.status).toBe(400);
    expect(["invalid_grant", "invalid_request"]).toContain(res.json.error);
    expect(res.json.access_token).toBeUndefined();
  });

  it("refuses an expired code", async () => {
    // A server whose codes live 2 s, so the test waits seconds rather than ten minutes.
    const short = await startTestServer({ AUTH_CODE_TTL: "2" });
    try {
      const who = await signUp(short);
      const app = await registerClient(short);
      const { verifier, challenge } = pkce();
      const { code } = await authorize(short, { clientId: app.client_id, cookie: who.cookie, challenge, scope: "openid profile" });
      expect(code).toBeTruthy();
      await new Promise((r) => setTimeout(r, 3100));
      const res = await token(short, { grant_type: "authorization_code", code: code!, redirect_uri: REDIRECT, client_id: app.client_id, code_verifier: verifier });
      expect(res.status).toBe(400);
      expect(res.json.error).toBe("invalid_grant");
      expect(res.json.access_token).toBeUndefined();
    } finally {
      await short.close();
    }
  });

  it("refuses an unknown client", async () => {
    const { code, verifier } = await freshCode();
    const res = await token(server, { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: "no-such-client", code_verifier: verifier });
    // RFC 6749 §5.2: 401 is required only when the client tried the Authorization header.
    expect([400, 401]).toContain(res.status);
    expect(res.json.error).toBe("invalid_client");
  });

  it("authenticates the client before spending the code", async () => {
    const { code, verifier } = await freshCode();
    const wrong = await token(server, { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: "no-such-client", code_verifier: verifier });
    expect(wrong.json.error).toBe("invalid_client");
    const right = await token(server, { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier });
    expect(right.status, JSON.stringify(right.json)).toBe(200);
  });

  it("refuses an unsupported grant type", async () => {
    for (const grant of ["password", "implicit", "urn:example:nope"]) {
      const res = await token(server, { grant_type: grant, client_id: client.client_id, username: "a", password: "b" });
      expect(res.status, grant).toBe(400);
      expect(res.json.error, grant).toBe("unsupported_grant_type");
    }
    // client_credentials is supported (machine clients), never for a public client (RFC 6749 §4.4).
    const machine = await token(server, { grant_type: "client_credentials", client_id: client.client_id });
    expect(machine.status).toBe(400);
    expect(["unauthorized_client", "invalid_client"]).toContain(machine.json.error);
  });

  it("answers malformed token requests with an RFC 6749 error, not a 500", async () => {
    const cases: Array<[string, string]> = [
      ["application/json", JSON.stringify({ grant_type: "authorization_code" })],
      ["application/x-www-form-urlencoded", ""],
      ["application/x-www-form-urlencoded", "grant_type=refresh_token&refresh_token=nope&client_id=" + client.client_id],
      ["text/plain", "hello"],
    ];
    for (const [type, body] of cases) {
      const res = await fetch(`${server.url}/api/auth/oauth2/token`, { method: "POST", headers: { "content-type": type }, body });
      expect(res.status, `${type} ${body}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${type} ${body}`).toBeLessThan(500);
      const json = await res.json();
      expect(typeof json.error, `${type} ${body}`).toBe("string");
    }
  });
});

import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { authorize, pkce, registerClient, signUp, token } from "../helpers/oauth.js";
import { postForm } from "../helpers/server.js";
import { unsupportedOption } from "../../plugins/fast-lane/refresh.js";

/**
 * REFRESH_REUSE_GRACE_SECONDS: a client whose refresh answer was lost presents the rotated token
 * again within the window and gets the very same pair; after the window, reuse is theft
 * (RFC 9700 §4.14.2) and the whole grant is revoked.
 */
const GRACE = 2;
const server = useTestServer({ REFRESH_REUSE_GRACE_SECONDS: String(GRACE) });
const REDIRECT = "https://rp.example.com/callback";
const basicAuth = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
const sha256 = (value: string) => createHash("sha256").update(value).digest("base64url");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Pair {
  access_token: string;
  refresh_token: string;
  scope: string;
}

async function grant() {
  const person = await signUp(server);
  const client = await registerClient(server, { application_type: "web", token_endpoint_auth_method: "client_secret_basic", redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"] });
  const auth = basicAuth(client.client_id, client.client_secret!);
  const { verifier, challenge } = pkce();
  const code = await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge, scope: "openid profile offline_access", redirectUri: REDIRECT });
  const res = await token(server, { grant_type: "authorization_code", code: code.code!, redirect_uri: REDIRECT, code_verifier: verifier }, { authorization: auth });
  expect(res.status, res.text).toBe(200);
  return { auth, tokens: res.json as Pair };
}

const refresh = (auth: string, refreshToken: string, extra: Record<string, string> = {}) => token(server, { grant_type: "refresh_token", refresh_token: refreshToken, ...extra }, { authorization: auth });
const active = async (auth: string, accessToken: string) => (await postForm(server, "/api/auth/oauth2/introspect", { token: accessToken }, { authorization: auth })).json.active;

describe("refresh reuse grace", () => {
  it("answers the rotated token's retry within the window with the same new pair, and the family lives on", async () => {
    const { auth, tokens } = await grant();
    const first = await refresh(auth, tokens.refresh_token);
    expect(first.status, first.text).toBe(200);
    const retry = await refresh(auth, tokens.refresh_token);
    expect(retry.status, retry.text).toBe(200);
    expect(retry.headers.get("cache-control")).toContain("no-store");
    const [a, b] = [first.json as Pair, retry.json as Pair];
    expect(b.access_token).toBe(a.access_token);
    expect(b.refresh_token).toBe(a.refresh_token);
    expect(b.scope).toBe(a.scope);
    // The replayed pair is the live one: its access token is active and its refresh token rotates.
    expect(await active(auth, b.access_token)).toBe(true);
    const next = await refresh(auth, b.refresh_token);
    expect(next.status, next.text).toBe(200);
  });

  it("keeps the answer on the old token's row encrypted, never the token strings in clear", async () => {
    const { auth, tokens } = await grant();
    const first = await refresh(auth, tokens.refresh_token);
    expect(first.status, first.text).toBe(200);
    const pair = first.json as Pair;
    const row = await server.db.selectFrom("oauthRefreshToken").select(["rotationReplayResponse", "rotationReplayExpiresAt"]).where("token", "=", sha256(tokens.refresh_token)).executeTakeFirstOrThrow();
    expect(typeof row.rotationReplayResponse).toBe("string");
    expect(row.rotationReplayResponse).not.toContain(pair.refresh_token);
    expect(row.rotationReplayResponse).not.toContain(pair.access_token);
    expect(new Date(row.rotationReplayExpiresAt as unknown as string).getTime()).toBeLessThanOrEqual(Date.now() + GRACE * 1000 + 1000);
  });

  it("refuses a retry that asks for something else (a narrower scope) without answering the pair", async () => {
    const { auth, tokens } = await grant();
    const first = await refresh(auth, tokens.refresh_token);
    expect(first.status, first.text).toBe(200);
    const other = await refresh(auth, tokens.refresh_token, { scope: "openid offline_access" });
    expect(other.status).toBe(400);
    expect(other.json.error).toBe("invalid_grant");
    expect(other.text).not.toContain((first.json as Pair).refresh_token);
  });

  it("revokes the whole grant when the rotated token comes back after the window", async () => {
    const { auth, tokens } = await grant();
    const first = await refresh(auth, tokens.refresh_token);
    expect(first.status, first.text).toBe(200);
    const pair = first.json as Pair;
    await sleep(GRACE * 1000 + 1200);
    const late = await refresh(auth, tokens.refresh_token);
    expect(late.status).toBe(400);
    expect(late.json.error).toBe("invalid_grant");
    // Reuse outside the window is theft: the pair issued by the rotation dies with the grant.
    expect(await active(auth, pair.access_token)).toBe(false);
    const after = await refresh(auth, pair.refresh_token);
    expect(after.status).toBe(400);
    expect(after.json.error).toBe("invalid_grant");
  });

  it("leaves refreshes to oauth-provider's path while the grace is on (the fast lane declines)", async () => {
    const ctx = await server.auth.$context;
    const provider = (ctx.getPlugin("oauth-provider") as { options: Parameters<typeof unsupportedOption>[0] }).options;
    const jwt = (ctx.getPlugin("jwt") as { options: Parameters<typeof unsupportedOption>[1] }).options;
    expect(provider.refreshTokenReuseInterval).toBe(GRACE);
    expect(unsupportedOption(provider, jwt)).toMatch(/reuse interval/);
    // With the grace off, the same configuration is one the lane answers.
    expect(unsupportedOption({ ...provider, refreshTokenReuseInterval: 0 }, jwt)).toBeNull();
  });
});

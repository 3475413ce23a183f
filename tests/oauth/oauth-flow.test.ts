import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { authorize, fullCodeFlow, pkce, REDIRECT, registerClient, signUp, token } from "../helpers/oauth.js";

const server = useTestServer();

async function userinfo(accessToken: string) {
  return server.api("/api/auth/oauth2/userinfo", { headers: { authorization: `Bearer ${accessToken}` } });
}

describe("authorization code + PKCE", () => {
  it("issues tokens once for a code, with no-store and an authoritative expires_in", async () => {
    const { tokens, auth } = await fullCodeFlow(server);
    expect(tokens.status).toBe(200);
    expect(tokens.headers.get("cache-control")).toBe("no-store");
    expect(tokens.json).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "openid profile email offline_access" });
    expect(typeof tokens.json.access_token).toBe("string");
    expect(typeof tokens.json.refresh_token).toBe("string");
    expect(typeof tokens.json.id_token).toBe("string");
    // RFC 9207: the authorization response names the issuer; state round-trips.
    expect(auth.url.searchParams.get("iss")).toBe(server.url);
    expect(auth.url.searchParams.get("state")).toBe(auth.state);
  });

  it("refuses a replayed code and revokes what the code issued", async () => {
    const { client, auth, verifier, tokens } = await fullCodeFlow(server);
    expect((await userinfo(tokens.json.access_token)).status).toBe(200);
    const replay = await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier });
    expect(replay.status).toBe(400);
    expect(replay.json).toMatchObject({ error: "invalid_grant" });
    expect((await userinfo(tokens.json.access_token)).status).toBe(401);
    const refresh = await token(server, { grant_type: "refresh_token", refresh_token: tokens.json.refresh_token, client_id: client.client_id });
    expect(refresh.status).toBe(400);
    expect(refresh.json.error).toBe("invalid_grant");
  });

  it("rotates refresh tokens and revokes the whole family when a rotated one is reused", async () => {
    const { client, tokens } = await fullCodeFlow(server);
    const first = await token(server, { grant_type: "refresh_token", refresh_token: tokens.json.refresh_token, client_id: client.client_id });
    expect(first.status).toBe(200);
    expect(first.json.refresh_token).not.toBe(tokens.json.refresh_token);
    const reuse = await token(server, { grant_type: "refresh_token", refresh_token: tokens.json.refresh_token, client_id: client.client_id });
    expect(reuse.status).toBe(400);
    expect(reuse.json.error).toBe("invalid_grant");
    // The thief's reuse also kills the legitimate holder's newer token (RFC 9700 §4.14.2).
    const newer = await token(server, { grant_type: "refresh_token", refresh_token: first.json.refresh_token, client_id: client.client_id });
    expect(newer.status).toBe(400);
    expect(newer.json.error).toBe("invalid_grant");
  });

  it("a refresh token sent twice at once rotates once: one answer has new tokens, the other is invalid_grant", async () => {
    const { client, tokens } = await fullCodeFlow(server);
    const params = { grant_type: "refresh_token", refresh_token: tokens.json.refresh_token, client_id: client.client_id };
    const answers = await Promise.all([token(server, params), token(server, params)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
    expect(answers.find((a) => a.status === 400)!.json.error).toBe("invalid_grant");
    expect(answers.find((a) => a.status === 200)!.json.refresh_token).not.toBe(tokens.json.refresh_token);
  });
});

describe("refresh tokens only for clients registered for the refresh_token grant", () => {
  /** Authorize `scope` for a new person and exchange the code, as the client registered by `metadata`. */
  async function codeFlowAs(metadata: Record<string, unknown>, scope = "openid profile offline_access") {
    const person = await signUp(server);
    const client = await registerClient(server, metadata);
    const { verifier, challenge } = pkce();
    const auth = await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge, scope });
    const tokens = await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier });
    return { client, tokens };
  }

  const refreshTokensOf = async (clientId: string) =>
    Number((await server.db.selectFrom("oauthRefreshToken").select((eb) => eb.fn.countAll().as("n")).where("clientId", "=", clientId).executeTakeFirst())?.n ?? 0);

  it("a client registered for authorization_code only gets no refresh token, even with offline_access (nor one that registered no grant_types: RFC 7591's default)", async () => {
    for (const metadata of [{ grant_types: ["authorization_code"] }, { grant_types: undefined }]) {
      const { client, tokens } = await codeFlowAs(metadata);
      expect(client.grant_types).toEqual(["authorization_code"]);
      expect(tokens.status, tokens.text).toBe(200);
      expect(tokens.json.access_token).toEqual(expect.any(String));
      expect(tokens.json.id_token).toEqual(expect.any(String));
      expect(tokens.json).not.toHaveProperty("refresh_token");
      // The scope says what was granted (RFC 6749 §5.1): offline access was not.
      expect(tokens.json.scope.split(" ")).not.toContain("offline_access");
      expect(await refreshTokensOf(client.client_id)).toBe(0);
    }
  });

  it("a refresh grant from a client not registered for it is unauthorized_client (RFC 6749 §5.2), also with a refresh token issued before", async () => {
    const { client, tokens } = await codeFlowAs({ grant_types: ["authorization_code", "refresh_token"] });
    expect(tokens.json.refresh_token).toEqual(expect.any(String));
    // The client's registration no longer lists refresh_token (a token issued under the old rule).
    await server.db.updateTable("oauthClient").set({ grantTypes: JSON.stringify(["authorization_code"]) }).where("clientId", "=", client.client_id).execute();
    const res = await token(server, { grant_type: "refresh_token", refresh_token: tokens.json.refresh_token, client_id: client.client_id });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.json.error).toBe("unauthorized_client");
  });
});

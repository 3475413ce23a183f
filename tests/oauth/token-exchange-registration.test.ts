import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { bitcoinKey } from "../helpers/dpop.js";
import { useTestServer } from "../helpers/fixtures.js";
import { signUp } from "../helpers/oauth.js";
import { postForm } from "../helpers/server.js";
import { ACCESS_TOKEN, GRANT, mcp, personsGrant, verified } from "../helpers/token-exchange.js";

/**
 * Registration of an agent (RFC 7591): a signed-in person registers a confidential client whose
 * only grant is token exchange (RFC 8693), with a key in `jwks` for private_key_jwt (RFC 7523
 * §2.2) and no redirect URIs; the agent then exchanges a person's token authenticated by an
 * ES256K assertion from that key (a Bitcoin key), with no secret at all.
 */
const server = useTestServer();
const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const tokenUrl = () => `${server.url}/api/auth/oauth2/token`;

async function registerKeyAgent(key: ReturnType<typeof bitcoinKey>, kid: string) {
  const owner = await signUp(server);
  return server.api("/api/auth/oauth2/register", {
    body: { client_name: "Key agent", grant_types: [GRANT], token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [{ ...key.jwk, kid, use: "sig", alg: "ES256K" }] } },
    headers: { cookie: owner.cookie },
  });
}

function assertion(key: ReturnType<typeof bitcoinKey>, clientId: string, kid: string) {
  const now = Math.floor(Date.now() / 1000);
  return key.sign({ kid, typ: "JWT" }, { iss: clientId, sub: clientId, aud: tokenUrl(), iat: now, exp: now + 60, jti: randomUUID() });
}

describe("registering an agent for token exchange", () => {
  it("a signed-in person registers a confidential exchange-only client with jwks and no redirect URIs", async () => {
    const key = bitcoinKey();
    const res = await registerKeyAgent(key, "agent-key");
    expect(res.status, res.text).toBe(201);
    expect(res.json).toMatchObject({ grant_types: [GRANT], token_endpoint_auth_method: "private_key_jwt" });
    expect(res.json.redirect_uris ?? []).toEqual([]);
    expect(res.json.client_secret).toBeUndefined();
  });

  it("the agent exchanges a person's token authenticated by an ES256K private_key_jwt assertion; a replayed assertion is refused", async () => {
    const key = bitcoinKey();
    const kid = randomUUID();
    const reg = await registerKeyAgent(key, kid);
    expect(reg.status, reg.text).toBe(201);
    const agentId = reg.json.client_id as string;
    const grant = await personsGrant(server);
    const signed = await assertion(key, agentId, kid);
    const form = { grant_type: GRANT, subject_token: grant.accessToken, subject_token_type: ACCESS_TOKEN, resource: mcp(server), client_assertion_type: ASSERTION_TYPE, client_assertion: signed };
    const res = await postForm(server, "/api/auth/oauth2/token", form);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ issued_token_type: ACCESS_TOKEN, token_type: "Bearer" });
    const claims = await verified(server, res.json.access_token, mcp(server));
    expect(claims).toMatchObject({ sub: grant.person.user.id, act: { sub: agentId }, client_id: agentId });
    const replayed = await postForm(server, "/api/auth/oauth2/token", form);
    // RFC 6749 §5.2 invalid_client; oauth-provider answers a spent jti 400 and a bad signature 401.
    expect(replayed.status).toBe(400);
    expect(replayed.json.error).toBe("invalid_client");
    // Another key's assertion for the same client does not authenticate it.
    const other = await postForm(server, "/api/auth/oauth2/token", { ...form, client_assertion: await assertion(bitcoinKey(), agentId, kid) });
    expect(other.status).toBe(401);
    expect(other.json.error).toBe("invalid_client");
  });
});

import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { authorize, pkce, registerClient, signUp, token } from "../helpers/oauth.js";
import { postForm } from "../helpers/server.js";

/**
 * plugins/fast-lane/introspect.ts answers the common introspection (an opaque access token, asked
 * about by its own client with client_secret_basic) from two prepared lookups. Its answers must
 * be oauth-provider's, field by field and header by header: each test asks both ways, the
 * generic endpoint reached with a form field the fast path does not take (`x`, which the
 * endpoint's body schema drops).
 */
const server = useTestServer();
const REDIRECT = "https://rp.example.com/callback";

const basicAuth = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;

async function setup(scope = "openid profile email offline_access", options: { identity?: boolean } = {}) {
  const person = await signUp(server);
  if (options.identity) {
    // A primary BAP identity: authorize selects it, and the token carries it (referenceId), so
    // introspection adds its `bap_id` before its own fields.
    const now = new Date();
    await server.db
      .insertInto("bapIdentity")
      .values({ id: `bap-${person.user.id}`, userId: person.user.id, bapId: `Bap${person.user.id}`.slice(0, 30), rootAddress: "1RootAddressXXXXXXXXXXXXXXXXXXXXX", currentAddress: "1CurrentAddressXXXXXXXXXXXXXXXXXX", identity: "{}", isPrimary: true, createdAt: now, updatedAt: now })
      .execute();
  }
  const client = await registerClient(server, { application_type: "web", token_endpoint_auth_method: "client_secret_basic", redirect_uris: [REDIRECT] });
  const auth = basicAuth(client.client_id, client.client_secret!);
  const { verifier, challenge } = pkce();
  const code = await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge, scope, redirectUri: REDIRECT });
  const res = await token(server, { grant_type: "authorization_code", code: code.code!, redirect_uri: REDIRECT, code_verifier: verifier }, { authorization: auth });
  expect(res.status, res.text).toBe(200);
  return { person, client, auth, tokens: res.json as { access_token: string; refresh_token: string } };
}

const introspect = (auth: string, fields: Record<string, string>) => postForm(server, "/api/auth/oauth2/introspect", fields, { authorization: auth });
/** The same question through oauth-provider's own endpoint. */
const generic = (auth: string, fields: Record<string, string>) => introspect(auth, { ...fields, x: "generic" });

const HEADERS = ["content-type", "cache-control", "pragma"];
function expectSameAnswer(fast: Awaited<ReturnType<typeof introspect>>, slow: Awaited<ReturnType<typeof introspect>>) {
  expect(fast.status).toBe(slow.status);
  // iat/exp are the token's, so the two answers are byte for byte the same, key order included.
  expect(fast.text).toBe(slow.text);
  for (const name of HEADERS) expect(fast.headers.get(name), name).toBe(slow.headers.get(name));
}

describe("fast introspection", () => {
  it("answers an active access token exactly as oauth-provider does, with and without the hint", async () => {
    const { person, client, auth, tokens } = await setup();
    const variants: Record<string, string>[] = [{ token: tokens.access_token }, { token: tokens.access_token, token_type_hint: "access_token" }];
    for (const fields of variants) {
      const fast = await introspect(auth, fields);
      expect(fast.json).toMatchObject({ active: true, sub: person.user.id, client_id: client.client_id, azp: client.client_id, token_type: "Bearer" });
      expectSameAnswer(fast, await generic(auth, fields));
    }
  });

  it("answers a token that carries a BAP identity with its bap_id first, as oauth-provider does", async () => {
    const { person, auth, tokens } = await setup("openid profile offline_access", { identity: true });
    const fast = await introspect(auth, { token: tokens.access_token });
    expect(Object.keys(fast.json as object)[0]).toBe("bap_id");
    expect((fast.json as { bap_id?: unknown }).bap_id).toBe(`Bap${person.user.id}`.slice(0, 30));
    expectSameAnswer(fast, await generic(auth, { token: tokens.access_token }));
  });

  it("answers the same for a token without profile (no identity claims) and one without a session", async () => {
    const { auth, tokens } = await setup("openid offline_access");
    expectSameAnswer(await introspect(auth, { token: tokens.access_token }), await generic(auth, { token: tokens.access_token }));
  });

  it("a revoked token is inactive at once", async () => {
    const { auth, tokens } = await setup();
    expect((await introspect(auth, { token: tokens.access_token })).json.active).toBe(true);
    const revoked = await postForm(server, "/api/auth/oauth2/revoke", { token: tokens.access_token, token_type_hint: "access_token" }, { authorization: auth });
    expect(revoked.status).toBe(200);
    const after = await introspect(auth, { token: tokens.access_token });
    expect(after.json).toEqual({ active: false });
    expectSameAnswer(after, await generic(auth, { token: tokens.access_token }));
  });

  it("leaves refusals to oauth-provider: a wrong secret, another client's token, a refresh token, an unknown token", async () => {
    const mine = await setup();
    const theirs = await setup();
    const wrong = basicAuth(mine.client.client_id, "not-the-secret");
    const cases: [string, Record<string, string>][] = [
      [wrong, { token: mine.tokens.access_token }],
      [theirs.auth, { token: mine.tokens.access_token }],
      [mine.auth, { token: mine.tokens.refresh_token }],
      [mine.auth, { token: "not-a-token-we-issued" }],
    ];
    for (const [auth, fields] of cases) expectSameAnswer(await introspect(auth, fields), await generic(auth, fields));
    expect((await introspect(wrong, { token: mine.tokens.access_token })).status).toBe(401);
    expect((await introspect(theirs.auth, { token: mine.tokens.access_token })).json).toEqual({ active: false });
  });

  it("an expired session makes the token inactive, as oauth-provider says", async () => {
    const { auth, tokens } = await setup();
    await server.db.updateTable("session").set({ expiresAt: new Date(Date.now() - 1000) }).execute();
    const fast = await introspect(auth, { token: tokens.access_token });
    expect(fast.json).toEqual({ active: false });
    expectSameAnswer(fast, await generic(auth, { token: tokens.access_token }));
  });
});

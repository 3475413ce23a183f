import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { authorize, pkce, REDIRECT, registerClient, signUp, token } from "../helpers/oauth.js";
import { accessTokenClaims, userInfoProfileClaims } from "../../auth.config.js";
import { userInfoAnswerer } from "../../plugins/fast-lane/userinfo.js";
import { userInfoTokenStore } from "../../plugins/oauth-store/userinfo.js";
import { selectedIdentityReader } from "../../plugins/bap-identity/store.js";
import { newIdentity, recordIdentity } from "../helpers/bap.js";

/**
 * plugins/fast-lane/userinfo.ts answers userinfo for an opaque Bearer token from one prepared
 * read, in the fast lane in front of the app. Its answers must be oauth-provider's byte for byte:
 * each case asks the server (the lane) and the app itself (`app.request`, which never passes
 * the lane: oauth-provider's endpoint and its hooks).
 */
const server = useTestServer();
const PATH = "/api/auth/oauth2/userinfo";
const HEADERS = ["content-type", "cache-control", "pragma", "www-authenticate"];

async function grant(scope: string, opts: { name?: string; identity?: boolean } = {}) {
  const person = await signUp(server, { name: opts.name ?? "Satoshi Nakamoto" });
  if (opts.identity) {
    const now = new Date();
    await server.db.updateTable("user").set({ pubkey: "02" + "cd".repeat(32), image: "https://img.example.com/a.png" }).where("id", "=", person.user.id).execute();
    await server.db
      .insertInto("bapIdentity")
      .values({ id: `bap-${person.user.id}`, userId: person.user.id, bapId: `Bap${person.user.id}`.slice(0, 30), rootAddress: "1RootAddressXXXXXXXXXXXXXXXXXXXXX", currentAddress: null, identity: JSON.stringify({ alternateName: "sn" }), isPrimary: true, createdAt: now, updatedAt: now })
      .execute();
  }
  const client = await registerClient(server);
  const { verifier, challenge } = pkce();
  const auth = await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge, scope });
  const tokens = await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier });
  expect(tokens.status, tokens.text).toBe(200);
  return { person, client, accessToken: tokens.json.access_token as string };
}

const ask = async (headers: Record<string, string>) => {
  const res = await fetch(server.url + PATH, { headers });
  return { status: res.status, text: await res.text(), headers: res.headers };
};
const askApp = async (headers: Record<string, string>) => {
  const res = await server.app.request(PATH, { headers });
  return { status: res.status, text: await res.text(), headers: res.headers };
};

async function expectSame(headers: Record<string, string>) {
  const fast = await ask(headers);
  const slow = await askApp(headers);
  expect(fast.status, fast.text).toBe(slow.status);
  expect(fast.text).toBe(slow.text);
  for (const name of HEADERS) expect(fast.headers.get(name), name).toBe(slow.headers.get(name));
  return fast;
}

describe("fast userinfo", () => {
  it("answers as oauth-provider does for each set of scopes, with the selected BAP profile", async () => {
    for (const [scope, identity] of [["openid profile email", true], ["openid profile email", false], ["openid email", false], ["openid", true], ["openid profile", true]] as const) {
      const { person, accessToken } = await grant(scope, { identity });
      const fast = await expectSame({ authorization: `Bearer ${accessToken}` });
      expect(fast.status).toBe(200);
      const body = JSON.parse(fast.text);
      expect(body.sub).toBe(person.user.id);
      if (scope.includes("profile")) expect(body).toMatchObject({ name: "Satoshi Nakamoto", given_name: "Satoshi", family_name: "Nakamoto" });
      if (scope.includes("email")) expect(body).toMatchObject({ email: person.email, email_verified: false });
      if (scope.includes("profile") && identity) expect(body).toMatchObject({ bap_id: `Bap${person.user.id}`.slice(0, 30), pubkey: "02" + "cd".repeat(32), picture: "https://img.example.com/a.png" });
      else expect(body.bap_id).toBeUndefined();
    }
  });

  it("takes the profile from the identities read with the token: the primary one in force, never a suspended one", async () => {
    const { person, accessToken } = await grant("openid profile", { identity: true });
    const first = `Bap${person.user.id}`.slice(0, 30);
    const second = newIdentity();
    await recordIdentity(server, person.user.id, { bapId: second.bapId, memberPubkey: second.pubkey, createdAt: new Date(Date.now() + 1000) });
    const bapId = async () => JSON.parse((await expectSame({ authorization: `Bearer ${accessToken}` })).text).bap_id;
    // Both in force: the primary one.
    expect(await bapId()).toBe(first);
    // The primary one suspended: the other, from the lane and the app alike.
    await server.db.updateTable("bapIdentity").set({ suspendedAt: new Date() }).where("bapId", "=", first).execute();
    expect(await bapId()).toBe(second.bapId);
    // None in force: no profile claims from an identity.
    await server.db.updateTable("bapIdentity").set({ suspendedAt: new Date() }).where("userId", "=", person.user.id).execute();
    expect(await bapId()).toBeUndefined();
    // Confirmed again: read afresh, nothing kept from the last answer.
    await server.db.updateTable("bapIdentity").set({ suspendedAt: null }).where("bapId", "=", first).execute();
    expect(await bapId()).toBe(first);
  });

  it("a one-word name has no given or family name, as oauth-provider splits it", async () => {
    const { accessToken } = await grant("openid profile", { name: "Satoshi" });
    const body = JSON.parse((await expectSame({ authorization: `Bearer ${accessToken}` })).text);
    expect(body.name).toBe("Satoshi");
    expect(body.given_name).toBeUndefined();
  });

  it("the common case is the lane's own answer, and every other case is left to the app", async () => {
    const answer = userInfoAnswerer({
      store: userInfoTokenStore(server.database),
      accessTokenClaims,
      userInfoClaims: userInfoProfileClaims(selectedIdentityReader(server.database)),
    });
    const { accessToken } = await grant("openid profile email");
    const lane = await answer({ authorization: `Bearer ${accessToken}` });
    expect(lane).toBe((await askApp({ authorization: `Bearer ${accessToken}` })).text);
    for (const headers of [{ authorization: `bearer ${accessToken}` }, { authorization: `Bearer ${accessToken}`, dpop: "x" }, { authorization: `Bearer ${accessToken}`, origin: "https://rp.example.com" }, { authorization: "Bearer unknown" }]) {
      expect(await answer(headers), JSON.stringify(headers)).toBeNull();
    }
  });

  it("says what oauth-provider says when revoked, signed out, unknown, with a lower-case scheme or a cookie beside it", async () => {
    const revoked = await grant("openid profile");
    const rev = await fetch(`${server.url}/api/auth/oauth2/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: revoked.accessToken, token_type_hint: "access_token", client_id: revoked.client.client_id }).toString(),
    });
    expect(rev.status).toBe(200);
    expect((await expectSame({ authorization: `Bearer ${revoked.accessToken}` })).status, "revoked").toBe(401);

    const signedOut = await grant("openid email");
    await server.db.deleteFrom("session").where("userId", "=", signedOut.person.user.id).execute();
    // Whatever oauth-provider makes of a token whose session is gone, the lane says the same.
    await expectSame({ authorization: `Bearer ${signedOut.accessToken}` });

    expect((await expectSame({ authorization: "Bearer not-a-token-we-issued" })).status).toBe(401);

    const other = await grant("openid profile");
    expect((await expectSame({ authorization: `bearer ${other.accessToken}` })).status).toBe(200);
    expect((await expectSame({ authorization: `Bearer ${other.accessToken}`, cookie: other.person.cookie })).status).toBe(200);
  });

  it("a disabled client's token is refused at once", async () => {
    const { client, accessToken } = await grant("openid");
    expect((await ask({ authorization: `Bearer ${accessToken}` })).status).toBe(200);
    await server.db.updateTable("oauthClient").set({ disabled: true }).where("clientId", "=", client.client_id).execute();
    expect((await expectSame({ authorization: `Bearer ${accessToken}` })).status).toBe(401);
  });
});

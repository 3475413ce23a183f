import { describe, expect, it } from "vitest";
import { useCountingListener } from "../helpers/fixtures.js";
import { authorize, pkce, REDIRECT, registerClient, signUp, token } from "../helpers/oauth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * OIDC Back-Channel Logout delivery goes through the guarded fetcher (lib/safe-fetch.ts).
 * Registration checks only the literal host of `backchannel_logout_uri`; a name that resolves
 * to loopback (or re-resolves there later) must not be POSTed to when a session ends. The
 * client is registered with a public-looking name, then its URI is pointed at `localhost` in
 * the database, as a DNS change would do; something listens there and counts connections.
 */

const listener = useCountingListener("127.0.0.1");

/** A person signed in to a client with a back-channel logout URI on `localhost`; then signs out. */
async function signOutWithLogoutUriInside(server: TestServer) {
  const person = await signUp(server);
  const client = await registerClient(server, { backchannel_logout_uri: "https://rp.example/logout" });
  const inside = `https://localhost:${listener.port}/logout`;
  await server.db.updateTable("oauthClient").set({ backchannelLogoutUri: inside }).where("clientId", "=", client.client_id).execute();
  const { verifier, challenge } = pkce();
  const granted = await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge });
  expect((await token(server, { grant_type: "authorization_code", code: granted.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier })).status).toBe(200);
  const before = listener.connections;
  expect((await server.api("/api/auth/sign-out", { cookie: person.cookie, body: {} })).status).toBe(200);
  await new Promise((resolve) => setTimeout(resolve, 500)); // delivery may run after the response
  return listener.connections - before;
}

describe("back-channel logout delivery", () => {
  it("is refused when the logout URI resolves to loopback", async () => {
    const server = await startTestServer();
    try {
      expect(await signOutWithLogoutUriInside(server)).toBe(0);
    } finally {
      await server.close();
    }
  });

  it("reaches it with OUTBOUND_ALLOW_PRIVATE=true (development): the same setup does deliver", async () => {
    const server = await startTestServer({ OUTBOUND_ALLOW_PRIVATE: "true" });
    try {
      expect(await signOutWithLogoutUriInside(server)).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });
});

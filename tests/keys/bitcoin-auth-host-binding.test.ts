import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newIdentity, signRequest, type TestIdentity } from "../helpers/bap.js";
import { authorize, pkce, REDIRECT, registerClient, signUp } from "../helpers/oauth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * The signed data of a Bitcoin-Auth token names no host. A token whose request path is this
 * server's absolute URL (AUTH_URL + path) is bound to it; a path-only token is accepted only
 * while BITCOIN_AUTH_REQUIRE_HOST_BINDING is off; a token bound to another host never.
 */
const SIGN_IN = "/api/auth/sign-in/sigma";
const SIGN_UP = "/api/auth/sign-up/sigma";
const OTHER_HOST = "https://other.example";

type Form = "path" | "bound" | "other host";

interface Fixture {
  server: TestServer;
  enrolled: TestIdentity;
  person: Awaited<ReturnType<typeof signUp>>;
  member: TestIdentity;
  clientId: string;
}

async function fixture(env: Record<string, string> = {}): Promise<Fixture> {
  const server = await startTestServer(env);
  const enrolled = newIdentity();
  expect((await enrol(server, enrolled, `${server.url}${SIGN_UP}`)).status).toBe(200);
  const member = newIdentity();
  const client = await registerClient(server, { member_pubkey: member.pubkey });
  return { server, enrolled, person: await signUp(server), member, clientId: client.client_id };
}

const prefix = (f: Fixture, form: Form) => (form === "path" ? "" : form === "bound" ? f.server.url : OTHER_HOST);

function enrol(server: TestServer, id: TestIdentity, signedPath: string) {
  const body = JSON.stringify({ bapId: id.bapId, intent: "sign-up" });
  return server.api(SIGN_UP, { body, headers: { "x-auth-token": signRequest(id.key, signedPath, body), "x-sigma-enrollment-proof": signRequest(id.key, signedPath, body) } });
}

/** Each Bitcoin-Auth route, called with a token of the given form: the status it answers, and the status that means "token accepted". */
const ROUTES: Record<string, { accepted: number; call: (f: Fixture, form: Form) => Promise<number> }> = {
  "key sign-in": {
    accepted: 200,
    async call(f, form) {
      const body = JSON.stringify({ bapId: f.enrolled.bapId });
      return (await f.server.api(SIGN_IN, { body, headers: { "x-auth-token": signRequest(f.enrolled.key, prefix(f, form) + SIGN_IN, body) } })).status;
    },
  },
  "key sign-up": {
    accepted: 200,
    call: async (f, form) => (await enrol(f.server, newIdentity(), prefix(f, form) + SIGN_UP)).status,
  },
  "backup GET with x-auth-token (no backup yet: 404)": {
    accepted: 404,
    async call(f, form) {
      const path = `/api/backup?bapId=${f.enrolled.bapId}`;
      return (await f.server.api(path, { headers: { "x-auth-token": signRequest(f.enrolled.key, prefix(f, form) + path, undefined) } })).status;
    },
  },
  "backup sync GET (no backup yet: 404)": {
    accepted: 404,
    async call(f, form) {
      const token = signRequest(f.enrolled.key, `${prefix(f, form)}/api/backup/sync`, undefined);
      return (await f.server.api(`/api/backup/sync?bapId=${f.enrolled.bapId}`, { headers: { authorization: `Bitcoin-Auth ${token}` } })).status;
    },
  },
  "bap-ids registration": {
    accepted: 201,
    async call(f, form) {
      const id = newIdentity();
      const body = JSON.stringify({ bapId: id.bapId });
      const token = signRequest(id.key, `${prefix(f, form)}/api/user/bap-ids`, body);
      return (await f.server.api("/api/user/bap-ids", { cookie: f.person.cookie, body, headers: { "x-auth-token": token } })).status;
    },
  },
  "member-key token request": {
    accepted: 200,
    async call(f, form) {
      const { verifier, challenge } = pkce();
      const { code } = await authorize(f.server, { clientId: f.clientId, cookie: f.person.cookie, challenge });
      const body = new URLSearchParams({ grant_type: "authorization_code", code: code!, redirect_uri: REDIRECT, client_id: f.clientId, code_verifier: verifier }).toString();
      const token = signRequest(f.member.key, `${prefix(f, form)}/api/auth/oauth2/token`, body);
      const res = await fetch(f.server.url + "/api/auth/oauth2/token", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", "x-auth-token": token }, body });
      await res.body?.cancel();
      return res.status;
    },
  },
};

describe("Bitcoin-Auth host binding, by default", () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture();
  });
  afterAll(async () => {
    await f?.server.close();
  });

  for (const [name, route] of Object.entries(ROUTES)) {
    it(`${name}: accepts the host-bound and the path-only form, refuses a token bound to another host`, async () => {
      expect(await route.call(f, "bound"), "bound").toBe(route.accepted);
      expect(await route.call(f, "path"), "path only").toBe(route.accepted);
      expect(await route.call(f, "other host"), "other host").toBe(401);
    });
  }

  it("refuses a token bound to this host by another scheme or port", async () => {
    const body = JSON.stringify({ bapId: f.enrolled.bapId });
    const url = new URL(f.server.url);
    for (const origin of [`https://${url.host}`, `http://${url.hostname}:1`, `http://localhost:${url.port}`]) {
      const res = await f.server.api(SIGN_IN, { body, headers: { "x-auth-token": signRequest(f.enrolled.key, origin + SIGN_IN, body) } });
      expect(res.status, origin).toBe(401);
    }
  });
});

describe("Bitcoin-Auth host binding with BITCOIN_AUTH_REQUIRE_HOST_BINDING=true", () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture({ BITCOIN_AUTH_REQUIRE_HOST_BINDING: "true" });
  });
  afterAll(async () => {
    await f?.server.close();
  });

  for (const [name, route] of Object.entries(ROUTES)) {
    it(`${name}: accepts only the host-bound form`, async () => {
      expect(await route.call(f, "path"), "path only").toBe(401);
      expect(await route.call(f, "other host"), "other host").toBe(401);
      expect(await route.call(f, "bound"), "bound").toBe(route.accepted);
    });
  }
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signUp } from "../helpers/oauth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * plugins/session-bearer: a session token as `Authorization: Bearer`, as better-auth's bearer
 * plugin takes it: the signed form handed out in `set-auth-token`, URL-encoded or not, and the
 * bare token; a signature that is not the token's gives no session.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

async function sessionWith(authorization: string): Promise<{ user?: { id: string } } | null> {
  const res = await fetch(`${server.url}/api/auth/get-session`, { headers: { authorization } });
  expect(res.status).toBe(200);
  return (await res.json()) as { user?: { id: string } } | null;
}

async function signedIn() {
  const person = await signUp(server);
  const res = await fetch(`${server.url}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: server.url },
    body: JSON.stringify({ email: person.email, password: person.password }),
  });
  expect(res.status).toBe(200);
  const handed = res.headers.get("set-auth-token")!;
  expect(handed).toBeTruthy();
  // The session cookie's value (the Set-Cookie header carries it URL-encoded).
  const cookie = res.headers.getSetCookie().find((c) => c.includes(".session_token="))!;
  const encoded = cookie.split(";")[0]!.split("=").slice(1).join("=");
  expect(handed).toBe(decodeURIComponent(encoded));
  expect(res.headers.get("access-control-expose-headers")).toContain("set-auth-token");
  return { person, handed: encoded, signed: handed };
}

describe("a session token as a bearer token", () => {
  it("the handed-out token, URL-encoded or not, and the bare token each name the session", async () => {
    const { person, handed, signed } = await signedIn();
    expect(signed).toMatch(/^[^.]+\.[A-Za-z0-9+/]{43}=$/);
    expect((await sessionWith(`Bearer ${handed}`))?.user?.id).toBe(person.user.id);
    expect((await sessionWith(`Bearer ${signed}`))?.user?.id).toBe(person.user.id);
    expect((await sessionWith(`bearer   ${signed}`))?.user?.id).toBe(person.user.id);
    const bare = signed.split(".")[0]!;
    expect((await sessionWith(`Bearer ${bare}`))?.user?.id).toBe(person.user.id);
    // The cookie check behind it takes only the padded Base64 form of the signature.
    const [token, signature] = signed.split(".");
    const url = Buffer.from(signature!, "base64").toString("base64url");
    expect(await sessionWith(`Bearer ${token}.${url}`)).toBeNull();
  });

  it("a signature that is not the token's, another token's, or none after the dot gives no session", async () => {
    const { signed } = await signedIn();
    const other = await signedIn();
    const [token, signature] = signed.split(".");
    const flipped = Buffer.from(signature!, "base64");
    flipped[0] = flipped[0]! ^ 1;
    expect(await sessionWith(`Bearer ${token}.${flipped.toString("base64")}`)).toBeNull();
    expect(await sessionWith(`Bearer ${token}.${other.signed.split(".")[1]}`)).toBeNull();
    expect(await sessionWith(`Bearer ${token}.`)).toBeNull();
    expect(await sessionWith(`Bearer ${token}.${signature!.slice(0, 20)}`)).toBeNull();
    expect(await sessionWith(`Basic ${Buffer.from(`${token}:x`).toString("base64")}`)).toBeNull();
    expect(await sessionWith("Bearer made-up-token")).toBeNull();
  });
});

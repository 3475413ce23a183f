import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { signUp } from "../helpers/oauth.js";
import { cookiesOf, uniqueEmail } from "../helpers/server.js";

/**
 * The session cookie as browsers get it: in production (an https AUTH_URL) its name carries
 * the `__Secure-` prefix and it is `Secure`, so it never travels over plain HTTP; and
 * `rememberMe` defaults to true (spec, Defaults), so a sign-in without it keeps a cookie with a
 * lifetime, while `rememberMe: false` gives a cookie that ends with the browser session.
 */
const SESSION = /^(__Secure-)?better-auth\.session_token=/;
const sessionCookieOf = (headers: Headers) => headers.getSetCookie().find((c) => SESSION.test(c) && !/session_token=;/.test(c));
const attributes = (cookie: string) => cookie.split(";").slice(1).map((a) => a.trim().toLowerCase());

describe("the session cookie in production (NODE_ENV=production, https AUTH_URL)", () => {
  // The listener is plain HTTP on loopback, as behind a TLS-terminating proxy; calls go to it with AUTH_URL's Origin.
  const server = useTestServer({ NODE_ENV: "production", AUTH_URL: "https://id.example.test", MAIL_DISABLED: "true" });

  it("is named with the __Secure- prefix, is Secure and HttpOnly, and signs the person in", async () => {
    const email = uniqueEmail("secure");
    const res = await server.local.api("/api/auth/sign-up/email", { body: { name: "Secure Person", email, password: "correct horse battery staple" } });
    expect(res.status).toBe(200);
    const cookie = sessionCookieOf(res.headers)!;
    expect(cookie).toMatch(/^__Secure-better-auth\.session_token=[^;]+/);
    expect(attributes(cookie)).toEqual(expect.arrayContaining(["secure", "httponly", "samesite=lax", "path=/"]));
    // Every cookie it sets is Secure.
    for (const set of res.headers.getSetCookie()) expect(attributes(set)).toContain("secure");
    const session = await server.local.api("/api/auth/get-session", { cookie: cookiesOf(res.headers) });
    expect(session.json?.user?.email).toBe(email);
    // The unprefixed name is not a session here.
    const unprefixed = cookiesOf(res.headers).replace("__Secure-better-auth", "better-auth");
    expect((await server.local.api("/api/auth/get-session", { cookie: unprefixed })).json).toBeNull();
  });
});

describe("the session cookie over http while developing", () => {
  const server = useTestServer();

  it("has no prefix and no Secure attribute (a browser would drop a Secure cookie over http)", async () => {
    const res = await server.api("/api/auth/sign-up/email", { body: { name: "Plain Person", email: uniqueEmail("plain"), password: "correct horse battery staple" } });
    const cookie = sessionCookieOf(res.headers)!;
    expect(cookie).toMatch(/^better-auth\.session_token=/);
    expect(attributes(cookie)).not.toContain("secure");
  });

  it("rememberMe defaults to true: a sign-in without it keeps the session past the browser session (Max-Age)", async () => {
    const person = await signUp(server);
    const res = await server.api("/api/auth/sign-in/email", { body: { email: person.email, password: person.password } });
    expect(res.status).toBe(200);
    const cookie = sessionCookieOf(res.headers)!;
    const maxAge = attributes(cookie).find((a) => a.startsWith("max-age="));
    expect(Number(maxAge?.split("=")[1])).toBeGreaterThan(24 * 3600);
    // The stored session lasts as long as the cookie says.
    const session = await server.api("/api/auth/get-session", { cookie: cookiesOf(res.headers) });
    expect(Date.parse(session.json.session.expiresAt) - Date.now()).toBeGreaterThan(24 * 3600 * 1000);
  });

  it("rememberMe: false gives a cookie that ends with the browser session (no Max-Age or Expires)", async () => {
    const person = await signUp(server);
    const res = await server.api("/api/auth/sign-in/email", { body: { email: person.email, password: person.password, rememberMe: false } });
    expect(res.status).toBe(200);
    const cookie = sessionCookieOf(res.headers)!;
    expect(attributes(cookie).some((a) => a.startsWith("max-age=") || a.startsWith("expires="))).toBe(false);
    expect((await server.api("/api/auth/get-session", { cookie: cookiesOf(res.headers) })).json.user.email).toBe(person.email);
  });
});

import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { readAuthRequest, verifiedCookieToken } from "../../lib/auth-request.js";

/**
 * The edge record's session cookie (lib/auth-request.ts): checked only when read, but with the
 * same verdict as before: a signed cookie names its session, a made-up one is no session.
 */
const SECRET = "a-secret-of-at-least-thirty-two-characters";
const BASE = "/api/auth";
const signed = (token: string, secret = SECRET) => encodeURIComponent(`${token}.${createHmac("sha256", secret).update(token).digest("base64")}`);
const request = (cookie?: string, path = "/get-session") => new Request(`http://localhost${BASE}${path}`, { headers: cookie ? { cookie } : {} });

describe("the edge record's session cookie", () => {
  it("is the token of a cookie signed with our secret (plain or __Secure- name)", async () => {
    expect((await readAuthRequest(request(`better-auth.session_token=${signed("tok-1")}`), BASE, SECRET)).sessionCookie).toBe("tok-1");
    expect((await readAuthRequest(request(`other=1; __Secure-better-auth.session_token=${signed("tok-2")}`), BASE, SECRET)).sessionCookie).toBe("tok-2");
  });

  it("is nothing for a made-up, foreign-signed, malformed or absent cookie", async () => {
    const cases = [
      `better-auth.session_token=tok-3.${Buffer.alloc(32, 7).toString("base64")}`,
      `better-auth.session_token=${signed("tok-3", "another-secret-of-at-least-thirty-two-chars")}`,
      "better-auth.session_token=tok-3",
      "better-auth.session_token=%E0%A4%A",
      "theme=dark",
      undefined,
    ];
    for (const cookie of cases) expect((await readAuthRequest(request(cookie), BASE, SECRET)).sessionCookie, String(cookie)).toBeUndefined();
  });

  it("is the Cookie header the request arrived with, checked once, whatever reads it first", async () => {
    const req = request(`better-auth.session_token=${signed("tok-4")}`, "/oauth2/userinfo");
    const record = await readAuthRequest(req, BASE, SECRET);
    req.headers.set("cookie", `better-auth.session_token=${signed("tok-5")}`);
    expect(record.sessionCookie).toBe("tok-4");
    expect(record.sessionCookie).toBe("tok-4");
    // The request's one record, made at the edge, is handed back as it is.
    expect(await readAuthRequest(req, BASE, SECRET)).toBe(record);
  });
});

describe("verifiedCookieToken's memory of checked values", () => {
  it("keeps a verdict for its own secret only, and never a refusal", () => {
    const other = "another-secret-of-at-least-thirty-two-chars";
    const value = signed("tok-6");
    expect(verifiedCookieToken(value, SECRET)).toBe("tok-6");
    // Remembered under SECRET: under another secret the same value is checked, and refused.
    expect(verifiedCookieToken(value, other)).toBeUndefined();
    expect(verifiedCookieToken(value, SECRET)).toBe("tok-6");
    // A refused value stays refused, and remembering it would not make it pass later either.
    const forged = `tok-7.${encodeURIComponent(Buffer.alloc(32, 9).toString("base64"))}`;
    expect(verifiedCookieToken(forged, SECRET)).toBeUndefined();
    expect(verifiedCookieToken(forged, SECRET)).toBeUndefined();
    expect(verifiedCookieToken(signed("tok-7", other), SECRET)).toBeUndefined();
    expect(verifiedCookieToken(signed("tok-7", other), other)).toBe("tok-7");
  });

  it("checks again, with the same verdict, a value it held before more values than it keeps", () => {
    const secret = "a-third-secret-of-at-least-thirty-two-characters";
    const first = signed("tok-first", secret);
    expect(verifiedCookieToken(first, secret)).toBe("tok-first");
    for (let i = 0; i < 10_000; i++) verifiedCookieToken(signed(`tok-${i}`, secret), secret);
    // Dropped from memory, checked again: the same verdict.
    expect(verifiedCookieToken(first, secret)).toBe("tok-first");
  });
});

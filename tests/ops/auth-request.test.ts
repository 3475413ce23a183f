import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { readAuthRequest } from "../../lib/auth-request.js";

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

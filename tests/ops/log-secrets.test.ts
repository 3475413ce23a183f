import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createLogger, requestContext } from "../../lib/logger.js";
import { enrolKey, keySignIn, newIdentity, registerIdentity, signRequest } from "../helpers/bap.js";
import { useTestServer } from "../helpers/fixtures.js";
import { authorize, pkce, registerClient, signUp, token } from "../helpers/oauth.js";
import { postForm } from "../helpers/server.js";

/**
 * The logs never hold a secret: a full run of the flows at LOG_LEVEL=debug, with every log line
 * captured, and then a search of those lines for every password, secret, token, code, key
 * signature and ciphertext the run used (issue: structured logs that are safe to ship).
 */
const lines: string[] = [];
const server = useTestServer({ LOG_LEVEL: "debug" }, { logDestination: { write: (line: string) => void lines.push(line) } });

describe("structured logs", () => {
  it("write JSON lines with the level, time, message and the request id of the request being handled", () => {
    const captured: string[] = [];
    const logger = createLogger("debug", { write: (line: string) => void captured.push(line) });
    requestContext.run({ requestId: "req-123" }, () => logger.info("inside", { n: 1 }));
    logger.warn("outside");
    const [inside, outside] = captured.map((line) => JSON.parse(line));
    expect(inside).toMatchObject({ level: "info", msg: "inside", n: 1, requestId: "req-123" });
    expect(Number.isNaN(Date.parse(inside.time))).toBe(false);
    expect(outside).toMatchObject({ level: "warn", msg: "outside" });
    expect(outside.requestId).toBeUndefined();
  });

  it("censor credentials by name wherever a caller put them", () => {
    const captured: string[] = [];
    const logger = createLogger("debug", { write: (line: string) => void captured.push(line) });
    logger.info("careless", { password: "p4ss", body: { client_secret: "s3cret", nested: { refresh_token: "rt" } }, headers: { authorization: "Bearer abc", "x-auth-token": "tok" }, args: [{ token: "t0k" }] });
    const line = captured.join("");
    for (const secret of ["p4ss", "s3cret", "Bearer abc", "tok\"", "t0k"]) expect(line).not.toContain(secret);
    expect(JSON.parse(line)).toMatchObject({ password: "[redacted]", body: { client_secret: "[redacted]" }, headers: { authorization: "[redacted]" } });
  });

  it("hold none of the secrets a full run used, at debug level", async () => {
    const secrets: Record<string, string> = {};
    // Password sign-up and sign-in, one wrong password among them.
    const person = await signUp(server);
    secrets.password = person.password;
    secrets.sessionToken = person.token;
    const wrong = "wrong horse battery staple " + randomBytes(4).toString("hex");
    secrets.wrongPassword = wrong;
    expect((await server.api("/api/auth/sign-in/email", { body: { email: person.email, password: wrong } })).status).toBe(401);

    // A confidential client: registration, code + PKCE, token, refresh, introspection, revocation.
    const client = await registerClient(server, { application_type: "web", redirect_uris: ["https://app.example/cb"], token_endpoint_auth_method: "client_secret_basic" });
    secrets.clientSecret = client.client_secret!;
    secrets.registrationToken = String(client.registration_access_token);
    const basic = { authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString("base64")}` };
    const { verifier, challenge } = pkce();
    secrets.verifier = verifier;
    const auth = await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge, redirectUri: "https://app.example/cb" });
    secrets.code = auth.code!;
    const tokens = await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: "https://app.example/cb", code_verifier: verifier }, basic);
    expect(tokens.status).toBe(200);
    Object.assign(secrets, { accessToken: tokens.json.access_token, refreshToken: tokens.json.refresh_token, idToken: tokens.json.id_token });
    const refreshed = await token(server, { grant_type: "refresh_token", refresh_token: tokens.json.refresh_token }, basic);
    expect(refreshed.status).toBe(200);
    secrets.refreshed = refreshed.json.refresh_token;
    // Reuse of a rotated refresh token: the failure path logs too.
    expect((await token(server, { grant_type: "refresh_token", refresh_token: tokens.json.refresh_token }, basic)).status).toBe(400);
    expect((await postForm(server, "/api/auth/oauth2/introspect", { token: refreshed.json.access_token }, basic)).status).toBe(200);
    expect((await postForm(server, "/api/auth/oauth2/revoke", { token: refreshed.json.refresh_token }, basic)).status).toBe(200);

    // A BAP identity, key sign-in, a backup (ciphertext).
    const id = newIdentity();
    const registered = await registerIdentity(server, person.cookie, id);
    expect(registered.status).toBe(201);
    secrets.wif = id.key.toWif();
    const other = newIdentity();
    secrets.otherWif = other.key.toWif();
    expect((await enrolKey(server, other)).status).toBe(200);
    const signedIn = await keySignIn(server, other);
    expect(signedIn.status).toBe(200);
    const body = JSON.stringify({ bapId: other.bapId });
    secrets.bitcoinAuthToken = signRequest(other.key, "/api/auth/sign-in/sigma", body);
    // A replayed token: refused, logged as a failure at most.
    const res = await server.api("/api/auth/sign-in/sigma", { body, headers: { "x-auth-token": secrets.bitcoinAuthToken } });
    expect(res.status).toBe(200);
    expect((await server.api("/api/auth/sign-in/sigma", { body, headers: { "x-auth-token": secrets.bitcoinAuthToken } })).status).toBe(401);
    const ciphertext = randomBytes(96).toString("base64");
    secrets.ciphertext = ciphertext;
    expect((await server.api("/api/backup", { cookie: person.cookie, body: { encryptedBackup: ciphertext } })).status).toBe(200);

    const log = lines.join("");
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    const leaked = Object.entries(secrets).filter(([, value]) => value && log.includes(value)).map(([name]) => name);
    expect(leaked).toEqual([]);
  });
});

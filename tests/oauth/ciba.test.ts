import { describeAuthorizationDetails } from "../../plugins/authorization-details/details.js";
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../lib/logger.js";
import { startCibaExpiry } from "../../plugins/ciba/expiry.js";
import { enrolKey, keySignIn, newIdentity } from "../helpers/bap.js";
import { proof, proofKey, serverNonce, thumbprint } from "../helpers/dpop.js";
import { approvalLink, CIBA_GRANT, decide, oauthError, registerCibaClient, requestIdOf, type CibaClient } from "../helpers/ciba.js";
import { useTestServer } from "../helpers/fixtures.js";
import { mailbox } from "../helpers/mailbox.js";
import { registerClient, signUp, token } from "../helpers/oauth.js";
import { cookiesOf, postForm, startTestServer, type TestServer } from "../helpers/server.js";
import { basic } from "../helpers/token-exchange.js";

/** OpenID CIBA Core 1.0, poll and ping modes, driven by openid-client where it has the functions. */
const POLL_INTERVAL = 1;
const MAX_PENDING = 3;
const box = mailbox();
// Ping notifications go to a loopback listener: the guarded fetcher may reach it in tests only.
const server = useTestServer({ CIBA_POLL_INTERVAL: String(POLL_INTERVAL), CIBA_MAX_PENDING: String(MAX_PENDING), OUTBOUND_ALLOW_PRIVATE: "true" }, { mailer: box.mailer });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString("utf8")) as Record<string, unknown>;

/** A backchannel request sent as a plain form post with the client's Basic credentials. */
function backchannel(client: { id: string; secret: string }, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return postForm(server, "/api/auth/oauth2/bc-authorize", fields, { ...basic(client.id, client.secret), ...headers });
}
const poll = (client: { id: string; secret: string }, authReqId: string) => token(server, { grant_type: CIBA_GRANT, auth_req_id: authReqId }, basic(client.id, client.secret));

describe("discovery", () => {
  it("advertises the backchannel endpoint, poll and ping, the grant and the acr values; nothing for signed requests or user codes", async () => {
    for (const path of ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"]) {
      const meta = (await server.api(path)).json;
      expect(meta.backchannel_authentication_endpoint).toBe(`${server.url}/api/auth/oauth2/bc-authorize`);
      expect(meta.backchannel_token_delivery_modes_supported).toEqual(["poll", "ping"]);
      expect(meta.backchannel_user_code_parameter_supported).toBe(false);
      expect(meta).not.toHaveProperty("backchannel_authentication_request_signing_alg_values_supported");
      expect(meta.grant_types_supported).toContain(CIBA_GRANT);
    }
    expect((await server.api("/.well-known/openid-configuration")).json.acr_values_supported).toEqual(["0", "phr"]);
  });
});

describe("poll mode with openid-client", () => {
  let client: CibaClient;
  beforeAll(async () => {
    client = await registerCibaClient(server);
  });

  it("answers pending until the person approves, then the tokens once", async () => {
    const person = await signUp(server, { name: "Poll Person" });
    const started = await oidc.initiateBackchannelAuthentication(client.config, { scope: "openid email offline_access", login_hint: person.email, binding_message: "Order 4711" });
    expect(started.expires_in).toBe(300);
    expect(started.interval).toBe(POLL_INTERVAL);
    expect(typeof started.auth_req_id).toBe("string");
    // Not answered yet: pending.
    const first = await poll(client, started.auth_req_id);
    expect(first.status).toBe(400);
    expect(first.headers.get("content-type")).toMatch(/^application\/json/);
    expect(first.json.error).toBe("authorization_pending");

    const link = await approvalLink(box, person.email);
    expect(link.origin).toBe(server.url);
    expect(link.pathname).toMatch(/^\/ciba\//);
    const mail = await box.latest(person.email, /asks for your approval/);
    expect(mail.text).toContain("Order 4711");
    // The auth_req_id is the client's credential: never in the mail.
    expect(mail.text).not.toContain(started.auth_req_id);

    const polling = oidc.pollBackchannelAuthenticationGrant(client.config, started);
    await sleep(1500);
    const decided = await decide(server, person.cookie, requestIdOf(link), "approve");
    expect(decided.status).toBe(200);
    expect(decided.json).toEqual({ status: "approved" });

    const tokens = await polling;
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
    expect(tokens.refresh_token).toBeTruthy();
    expect(tokens.claims()).toMatchObject({ sub: person.user.id, aud: client.id, iss: server.url });
    expect(typeof tokens.claims()!.auth_time).toBe("number");
    await expect(oidc.fetchUserInfo(client.config, tokens.access_token, person.user.id)).resolves.toMatchObject({ sub: person.user.id, email: person.email });
    // The refresh token works like any other.
    const refreshed = await oidc.refreshTokenGrant(client.config, tokens.refresh_token!);
    expect(refreshed.access_token).not.toBe(tokens.access_token);

    // Single use.
    await sleep(POLL_INTERVAL * 1000 + 100);
    const again = await poll(client, started.auth_req_id);
    expect(again.status).toBe(400);
    expect(again.json.error).toBe("invalid_grant");
  });

  it("answers access_denied once the person denies", async () => {
    const person = await signUp(server);
    const started = await oidc.initiateBackchannelAuthentication(client.config, { scope: "openid", login_hint: person.email });
    const link = await approvalLink(box, person.email);
    expect((await decide(server, person.cookie, requestIdOf(link), "deny")).json).toEqual({ status: "denied" });
    await expect(oauthError(oidc.pollBackchannelAuthenticationGrant(client.config, started))).resolves.toBe("access_denied");
    // Decided once: a later approval changes nothing.
    expect((await decide(server, person.cookie, requestIdOf(link), "approve")).status).toBe(404);
  });

  it("answers slow_down to a poll sooner than the interval, and the interval grows", async () => {
    const person = await signUp(server);
    const started = await oidc.initiateBackchannelAuthentication(client.config, { scope: "openid", login_hint: person.email });
    expect((await poll(client, started.auth_req_id)).json.error).toBe("authorization_pending");
    const tooSoon = await poll(client, started.auth_req_id);
    expect(tooSoon.status).toBe(400);
    expect(tooSoon.json.error).toBe("slow_down");
    // The interval is now 1 + 5 s: a poll after 1.2 s is still too soon.
    await sleep(1200);
    expect((await poll(client, started.auth_req_id)).json.error).toBe("slow_down");
  });

  it("answers expired_token past requested_expiry, and nobody can approve it any more", async () => {
    const person = await signUp(server);
    const res = await backchannel(client, { scope: "openid", login_hint: person.email, requested_expiry: "1" });
    expect(res.status).toBe(200);
    expect(res.json.expires_in).toBe(1);
    await sleep(1300);
    const expired = await poll(client, res.json.auth_req_id);
    expect(expired.status).toBe(400);
    expect(expired.json.error).toBe("expired_token");
    const link = await approvalLink(box, person.email);
    expect((await decide(server, person.cookie, requestIdOf(link), "approve")).status).toBe(404);
  });

  it("caps requested_expiry at CIBA_REQUEST_TTL", async () => {
    const person = await signUp(server);
    const res = await backchannel(client, { scope: "openid", login_hint: person.email, requested_expiry: "86400" });
    expect(res.status).toBe(200);
    expect(res.json.expires_in).toBe(300);
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  it("takes a BAP id as login_hint, and the tokens speak for that identity", async () => {
    const id = newIdentity();
    const enrolled = await enrolKey(server, id);
    expect(enrolled.status).toBe(200);
    const cookie = cookiesOf(enrolled.headers);
    const started = await oidc.initiateBackchannelAuthentication(client.config, { scope: "openid profile", login_hint: id.bapId });
    const pending = (await server.api("/account/apps", { cookie })).text;
    // The account page lists it.
    expect(pending).toContain("Requests waiting for you");
    expect(pending).toContain("Shopping Agent");
    const requestId = /data-ciba-id="([^"]+)"/.exec(pending)![1]!;
    expect((await decide(server, cookie, requestId, "approve")).status).toBe(200);
    const tokens = await oidc.pollBackchannelAuthenticationGrant(client.config, started);
    const info = await oidc.fetchUserInfo(client.config, tokens.access_token, tokens.claims()!.sub);
    expect(info.bap_id).toBe(id.bapId);
  });
});

describe("who may answer and redeem", () => {
  it("a stranger cannot see or decide someone else's request; the person still can", async () => {
    const client = await registerCibaClient(server);
    const person = await signUp(server);
    const stranger = await signUp(server);
    const started = await oidc.initiateBackchannelAuthentication(client.config, { scope: "openid", login_hint: person.email });
    const id = requestIdOf(await approvalLink(box, person.email));
    const attempt = await decide(server, stranger.cookie, id, "approve");
    expect(attempt.status).toBe(404);
    const page = await server.api(`/ciba/${id}`, { cookie: stranger.cookie });
    expect(page.status).toBe(404);
    expect(page.text).not.toContain(client.id);
    expect((await poll(client, started.auth_req_id)).json.error).toBe("authorization_pending");
    // Without a session at all: 401.
    expect((await server.api("/api/auth/ciba/decide", { body: { id, decision: "approve" } })).status).toBe(401);
    expect((await decide(server, person.cookie, id, "approve")).status).toBe(200);
  });

  it("another client cannot redeem the request, even with the auth_req_id", async () => {
    const client = await registerCibaClient(server);
    const other = await registerCibaClient(server, {}, "Other Agent");
    const person = await signUp(server);
    const started = await oidc.initiateBackchannelAuthentication(client.config, { scope: "openid", login_hint: person.email });
    await decide(server, person.cookie, requestIdOf(await approvalLink(box, person.email)), "approve");
    const stolen = await poll(other, started.auth_req_id);
    expect(stolen.status).toBe(400);
    expect(stolen.json.error).toBe("invalid_grant");
    // A wrong secret for the right client is no client at all.
    expect((await poll({ id: client.id, secret: "wrong" }, started.auth_req_id)).status).toBe(401);
    // The rightful client still gets its tokens.
    expect((await poll(client, started.auth_req_id)).status).toBe(200);
  });
});

describe("the backchannel authentication endpoint refuses", () => {
  let client: CibaClient;
  let email: string;
  beforeAll(async () => {
    client = await registerCibaClient(server);
    email = (await signUp(server)).email;
  });

  it("bad requests with RFC 6749 errors, never a 500", async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ scope: "email", login_hint: email }, "invalid_scope"],
      [{ scope: "openid", login_hint: "nobody-here@example.com" }, "unknown_user_id"],
      [{ scope: "openid" }, "invalid_request"],
      [{ scope: "openid", login_hint: email, binding_message: "line\nbreak" }, "invalid_binding_message"],
      [{ scope: "openid", login_hint: email, authorization_details: "not json" }, "invalid_authorization_details"],
      [{ scope: "openid", login_hint: email, authorization_details: '[{"amount": 5}]' }, "invalid_authorization_details"],
      [{ scope: "openid", login_hint: email, authorization_details: '{"type": "payment"}' }, "invalid_authorization_details"],
      [{ scope: "openid", login_hint: email, requested_expiry: "-5" }, "invalid_request"],
      [{ scope: "openid", id_token_hint: "x" }, "invalid_request"],
      [{ scope: "openid", login_hint: email, request: "eyJ.eyJ.sig" }, "invalid_request"],
    ];
    for (const [fields, error] of cases) {
      const res = await backchannel(client, fields);
      expect(res.status, JSON.stringify(fields)).toBe(400);
      expect(res.json.error, JSON.stringify(fields)).toBe(error);
      expect(typeof res.json.error_description).toBe("string");
    }
    const json = await server.api("/api/auth/oauth2/bc-authorize", { body: { scope: "openid", login_hint: email }, headers: basic(client.id, client.secret) });
    expect(json.status).toBeGreaterThanOrEqual(400);
    expect(json.status).toBeLessThan(500);
  });

  it("clients that are not registered for CIBA, or do not authenticate", async () => {
    const codeOnly = await registerClient(server, { application_type: "web", token_endpoint_auth_method: "client_secret_basic", grant_types: ["authorization_code"] });
    const res = await backchannel({ id: codeOnly.client_id, secret: codeOnly.client_secret! }, { scope: "openid", login_hint: email });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe("unauthorized_client");
    const anonymous = await postForm(server, "/api/auth/oauth2/bc-authorize", { client_id: client.id, scope: "openid", login_hint: email });
    expect([400, 401]).toContain(anonymous.status);
    expect(anonymous.json.error).toBe("invalid_client");
  });

  it(`more than ${MAX_PENDING} requests waiting for one person`, async () => {
    const person = await signUp(server);
    for (let i = 0; i < MAX_PENDING; i++) expect((await backchannel(client, { scope: "openid", login_hint: person.email })).status).toBe(200);
    const over = await backchannel(client, { scope: "openid", login_hint: person.email });
    expect(over.status).toBe(400);
    expect(over.json.error).toBe("access_denied");
    // Another person is not held back by it.
    expect((await backchannel(client, { scope: "openid", login_hint: email })).status).toBe(200);
  });
});

describe("authorization_details", () => {
  it("are checked per type as at authorize, shown in words, and come back with the tokens", async () => {
    const client = await registerCibaClient(server);
    const person = await signUp(server);
    const unknown = await backchannel(client, { scope: "openid", login_hint: person.email, authorization_details: JSON.stringify([{ type: "payment_initiation", instructedAmount: { currency: "USD", amount: "1000" } }]) });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toBe("invalid_authorization_details");
    const details = [{ type: "payment_transfer", instructedAmount: { currency: "USD", amount: "1000" }, creditorAccount: { address: "1BoatSLRHtKNngkdXEeobR76b53LETtpyT" } }];
    const res = await backchannel(client, { scope: "openid", login_hint: person.email, authorization_details: JSON.stringify(details) });
    expect(res.status).toBe(200);
    const link = await approvalLink(box, person.email);
    const page = await server.api(link.pathname, { cookie: person.cookie });
    const [words] = describeAuthorizationDetails(details as never);
    expect(words).toMatch(/1000/);
    expect(page.text).toContain(words!.replace(/&/g, "&amp;"));
    await decide(server, person.cookie, requestIdOf(link), "approve");
    await sleep(POLL_INTERVAL * 1000 + 100);
    const tokens = await poll(client, res.json.auth_req_id);
    expect(tokens.status).toBe(200);
    expect(tokens.json.authorization_details).toEqual(details);
  });
});

describe("strong approval (acr_values phr)", () => {
  it("needs a passkey or identity-key sign-in: a password session may deny but not approve", async () => {
    const client = await registerCibaClient(server);
    const id = newIdentity();
    const enrolled = await enrolKey(server, id);
    const person = { cookie: cookiesOf(enrolled.headers) };
    const started = await oidc.initiateBackchannelAuthentication(client.config, { scope: "openid", login_hint: id.bapId, acr_values: "phr" });
    const listed = (await server.api("/account/apps", { cookie: person.cookie })).text;
    const requestId = /data-ciba-id="([^"]+)"/.exec(listed)![1]!;
    // The sign-up made a session, not a strong sign-in: refused.
    const weak = await decide(server, person.cookie, requestId, "approve");
    expect(weak.status).toBe(403);
    expect(weak.json.code).toBe("STRONG_APPROVAL_REQUIRED");
    // Signed in with the identity key: approved.
    const strong = await keySignIn(server, id);
    expect(strong.status).toBe(200);
    expect((await decide(server, cookiesOf(strong.headers), requestId, "approve")).status).toBe(200);
    const tokens = await oidc.pollBackchannelAuthenticationGrant(client.config, started);
    expect(tokens.access_token).toBeTruthy();
  });

  it("a password session of a person with a password is refused too", async () => {
    const client = await registerCibaClient(server);
    const person = await signUp(server);
    await backchannel(client, { scope: "openid", login_hint: person.email, acr_values: "phr" });
    const id = requestIdOf(await approvalLink(box, person.email));
    const signedIn = await server.api("/api/auth/sign-in/email", { body: { email: person.email, password: person.password } });
    const refused = await decide(server, cookiesOf(signedIn.headers), id, "approve");
    expect(refused.status).toBe(403);
    expect((await decide(server, person.cookie, id, "deny")).status).toBe(200);
  });
});

describe("client registration", () => {
  it("takes poll and ping with an endpoint, and refuses push or ping without one", async () => {
    const ping = await registerClient(server, {
      application_type: "web",
      token_endpoint_auth_method: "client_secret_basic",
      grant_types: ["authorization_code", CIBA_GRANT],
      backchannel_token_delivery_mode: "ping",
      backchannel_client_notification_endpoint: "https://agent.example.com/cb",
    });
    expect(ping.backchannel_token_delivery_mode).toBe("ping");
    expect(ping.backchannel_client_notification_endpoint).toBe("https://agent.example.com/cb");
    // RFC 7592: the client reads them back.
    const read = await server.api(new URL(ping.registration_client_uri as string).pathname, { headers: { authorization: `Bearer ${ping.registration_access_token}` } });
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({ backchannel_token_delivery_mode: "ping", backchannel_client_notification_endpoint: "https://agent.example.com/cb" });
    const refused = async (metadata: Record<string, unknown>) => {
      const res = await server.api("/api/auth/oauth2/register", {
        body: { client_name: "X", application_type: "web", redirect_uris: ["https://agent.example.com/cb"], token_endpoint_auth_method: "client_secret_basic", grant_types: ["authorization_code", CIBA_GRANT], ...metadata },
      });
      expect(res.status, JSON.stringify(metadata)).toBe(400);
      expect(res.json.error).toBe("invalid_client_metadata");
    };
    await refused({ backchannel_token_delivery_mode: "push", backchannel_client_notification_endpoint: "https://agent.example.com/cb" });
    await refused({ backchannel_token_delivery_mode: "ping" });
    await refused({ backchannel_token_delivery_mode: "ping", backchannel_client_notification_endpoint: "ftp://agent.example.com/cb" });
    await refused({ backchannel_token_delivery_mode: "poll", grant_types: ["authorization_code"] });
  });
});

describe("ping mode", () => {
  const received: Array<{ authorization?: string; body: string }> = [];
  let failFirst = true;
  const listener = createServer(async (req: IncomingMessage, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    received.push({ authorization: req.headers.authorization, body });
    // The first delivery fails: the server tries again.
    if (failFirst) {
      failFirst = false;
      res.writeHead(503).end();
    } else res.writeHead(204).end();
  });
  beforeAll(() => new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve)));
  afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

  it("notifies the client's endpoint with its token after the decision, retrying a failure; then the client redeems", async () => {
    const endpoint = `http://localhost:${(listener.address() as AddressInfo).port}/ciba-callback`;
    const client = await registerCibaClient(server, { backchannel_token_delivery_mode: "ping", backchannel_client_notification_endpoint: endpoint }, "Ping Agent");
    const person = await signUp(server);
    // client_notification_token is required in ping mode.
    const missing = await backchannel(client, { scope: "openid", login_hint: person.email });
    expect(missing.json.error).toBe("invalid_request");
    const res = await backchannel(client, { scope: "openid", login_hint: person.email, client_notification_token: "ping-secret-123" });
    expect(res.status).toBe(200);
    expect(received).toEqual([]);
    await decide(server, person.cookie, requestIdOf(await approvalLink(box, person.email, "Ping Agent")), "approve");
    for (let i = 0; i < 60 && received.length < 2; i++) await sleep(100);
    expect(received).toHaveLength(2);
    for (const ping of received) {
      expect(ping.authorization).toBe("Bearer ping-secret-123");
      expect(JSON.parse(ping.body)).toEqual({ auth_req_id: res.json.auth_req_id });
    }
    const tokens = await poll(client, res.json.auth_req_id);
    expect(tokens.status).toBe(200);
    expect(typeof tokens.json.id_token).toBe("string");
    expect(claimsOf(tokens.json.id_token).aud).toBe(client.id);
  });
});

describe("DPoP", () => {
  it("binds a request made with a proof: redeemed only with a proof by the same key, and the tokens are bound to it", async () => {
    const client = await registerCibaClient(server, {}, "Bound Agent");
    const person = await signUp(server);
    const key = await proofKey("ES256K");
    const backchannelUrl = `${server.url}/api/auth/oauth2/bc-authorize`;
    const tokenUrl = `${server.url}/api/auth/oauth2/token`;
    // A proof for another URL is refused at the backchannel endpoint.
    const wrongHtu = await backchannel(client, { scope: "openid", login_hint: person.email }, { dpop: await proof(key, "POST", tokenUrl) });
    expect(wrongHtu.status).toBe(400);
    expect(wrongHtu.json.error).toBe("invalid_dpop_proof");
    const res = await backchannel(client, { scope: "openid", login_hint: person.email }, { dpop: await proof(key, "POST", backchannelUrl) });
    expect(res.status).toBe(200);
    await decide(server, person.cookie, requestIdOf(await approvalLink(box, person.email, "Bound Agent")), "approve");

    const nonce = await serverNonce(server);
    const redeem = (headers: Record<string, string>) => token(server, { grant_type: CIBA_GRANT, auth_req_id: res.json.auth_req_id }, { ...basic(client.id, client.secret), ...headers });
    const withoutProof = await redeem({});
    expect(withoutProof.status).toBe(400);
    expect(withoutProof.json.error).toBe("invalid_dpop_proof");
    const otherKey = await redeem({ dpop: await proof(await proofKey("ES256"), "POST", tokenUrl, { nonce }) });
    expect(otherKey.json.error).toBe("invalid_dpop_proof");
    const bound = await redeem({ dpop: await proof(key, "POST", tokenUrl, { nonce }) });
    expect(bound.status, bound.text).toBe(200);
    expect(bound.json.token_type).toBe("DPoP");
    const introspected = await postForm(server, "/api/auth/oauth2/introspect", { token: bound.json.access_token }, basic(client.id, client.secret));
    expect(introspected.json).toMatchObject({ active: true, cnf: { jkt: await thumbprint(key) } });
  });
});

describe("several instances and races", () => {
  let other: TestServer;
  beforeAll(async () => {
    // A second instance of the same deployment: same issuer, same database (and Redis, when set).
    const database = server.config.database;
    other = await startTestServer({ AUTH_URL: server.url, PORT: "0", DATABASE_URL: database.kind === "sqlite" ? database.file : database.url }, { mailer: box.mailer });
  });
  afterAll(async () => {
    await other?.close();
  });

  it("a request made at one instance is decided and redeemed at another", async () => {
    const client = await registerCibaClient(server, {}, "Fleet Agent");
    const person = await signUp(server);
    const res = await backchannel(client, { scope: "openid", login_hint: person.email });
    const id = requestIdOf(await approvalLink(box, person.email, "Fleet Agent"));
    expect((await other.local.api("/api/auth/ciba/decide", { cookie: person.cookie, body: { id, decision: "approve" } })).status).toBe(200);
    const tokens = await postForm({ url: other.local.url }, "/api/auth/oauth2/token", { grant_type: CIBA_GRANT, auth_req_id: res.json.auth_req_id }, basic(client.id, client.secret));
    expect(tokens.status, tokens.text).toBe(200);
  });

  it("of an approval and a denial sent at once exactly one wins; of two redemptions at once exactly one gets tokens", async () => {
    const client = await registerCibaClient(server, {}, "Race Agent");
    const person = await signUp(server);
    const res = await backchannel(client, { scope: "openid", login_hint: person.email });
    const id = requestIdOf(await approvalLink(box, person.email, "Race Agent"));
    const answers = await Promise.all([decide(server, person.cookie, id, "approve"), other.local.api("/api/auth/ciba/decide", { cookie: person.cookie, body: { id, decision: "deny" } })]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 404]);
    const won = answers.find((a) => a.status === 200)!.json.status;
    const redeem = (target: { url: string }) => postForm(target, "/api/auth/oauth2/token", { grant_type: CIBA_GRANT, auth_req_id: res.json.auth_req_id }, basic(client.id, client.secret));
    const redemptions = await Promise.all([redeem(server), redeem({ url: other.local.url })]);
    if (won === "approved") {
      expect(redemptions.map((r) => r.status).sort()).toEqual([200, 400]);
      expect(redemptions.find((r) => r.status === 400)!.json.error).toBe("invalid_grant");
    } else expect(redemptions.map((r) => r.json.error)).toEqual(["access_denied", "access_denied"]);
  });
});

describe("housekeeping", () => {
  it("deletes requests an hour past their expiry, and keeps the others", async () => {
    const client = await registerCibaClient(server, {}, "Old Agent");
    const person = await signUp(server);
    const old = await backchannel(client, { scope: "openid", login_hint: person.email });
    const fresh = await backchannel(client, { scope: "openid", login_hint: person.email });
    const hash = (authReqId: string) => createHash("sha256").update(authReqId).digest("base64url");
    await server.db.updateTable("cibaRequest").set({ expiresAt: new Date(Date.now() - 2 * 60 * 60 * 1000) }).where("authReqIdHash", "=", hash(old.json.auth_req_id)).execute();
    const rounds = startCibaExpiry({ db: server.db, logger: createLogger("silent") });
    try {
      for (let i = 0; i < 50; i++) {
        const left = await server.db.selectFrom("cibaRequest").select("authReqIdHash").where("authReqIdHash", "in", [hash(old.json.auth_req_id), hash(fresh.json.auth_req_id)]).execute();
        if (left.length === 1) break;
        await sleep(50);
      }
    } finally {
      rounds.stop();
    }
    expect((await poll(client, old.json.auth_req_id)).json.error).toBe("invalid_grant");
    expect((await poll(client, fresh.json.auth_req_id)).json.error).toBe("authorization_pending");
  });
});

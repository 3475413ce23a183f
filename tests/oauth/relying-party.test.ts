import * as oidc from "openid-client";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { fillByLabel, submitWith } from "../helpers/browser.js";
import { signInThroughPage, useBrowser, useCallbackServer, useTestServer } from "../helpers/fixtures.js";
import { signUp } from "../helpers/oauth.js";
import { uniqueEmail } from "../helpers/server.js";

/**
 * A real relying party (openid-client v6, which validates discovery, the authorization
 * response, the ID token signature via JWKS, iss, aud and nonce) against the running server,
 * with a person in headless Chromium going through our own pages.
 */
const server = useTestServer();
const browser = useBrowser();
const callback = useCallbackServer();

const SCOPE = "openid profile email offline_access";
/** Plain http on loopback: the only thing we relax in openid-client. */
const insecure = { execute: [oidc.allowInsecureRequests] };
const issuer = () => new URL(server.url);

/** Dynamic client registration (RFC 7591) by openid-client, for a client that redirects to our callback server. */
function registerRp(metadata: Partial<oidc.ClientMetadata>, clientAuth: oidc.ClientAuth) {
  return oidc.dynamicClientRegistration(issuer(), { redirect_uris: [callback.redirectUri], response_types: ["code"], ...metadata }, clientAuth, insecure);
}

/** Builds the request the RP would send the browser to, with PKCE S256, state and nonce. */
async function startAuthorization(config: oidc.Configuration) {
  const pkceCodeVerifier = oidc.randomPKCECodeVerifier();
  const expectedState = oidc.randomState();
  const expectedNonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: callback.redirectUri,
    scope: SCOPE,
    code_challenge: await oidc.calculatePKCECodeChallenge(pkceCodeVerifier),
    code_challenge_method: "S256",
    state: expectedState,
    nonce: expectedNonce,
  });
  return { url, checks: { pkceCodeVerifier, expectedState, expectedNonce, idTokenExpected: true } };
}

/** Allows on the consent page and returns the URL the browser arrived at. */
async function allow(page: Page, clientName: string): Promise<URL> {
  expect(new URL(page.url()).pathname).toBe("/consent");
  await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toContain(clientName);
  await submitWith(page, "Allow");
  const back = new URL(page.url());
  expect(`${back.origin}${back.pathname}`).toBe(callback.redirectUri);
  return back;
}

async function oauthError(promise: Promise<unknown>): Promise<string | undefined> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, "the request should have been refused").toBeInstanceOf(oidc.ResponseBodyError);
  return (err as oidc.ResponseBodyError).error;
}

describe("openid-client as relying party", () => {
  it("discovers the server from AUTH_URL and accepts its metadata", async () => {
    const config = await oidc.discovery(issuer(), "any-client-id", undefined, oidc.None(), insecure);
    const meta = config.serverMetadata();
    expect(meta.issuer).toBe(server.url);
    expect(meta.authorization_endpoint).toBe(`${server.url}/api/auth/oauth2/authorize`);
    expect(meta.token_endpoint).toBe(`${server.url}/api/auth/oauth2/token`);
    expect(meta.jwks_uri).toBeTruthy();
    expect(meta.registration_endpoint).toBe(`${server.url}/api/auth/oauth2/register`);
    expect(meta.code_challenge_methods_supported).toEqual(["S256"]);
    expect(meta.authorization_response_iss_parameter_supported).toBe(true);
    expect(meta.response_types_supported).toContain("code");
    expect(meta.id_token_signing_alg_values_supported).toContain("RS256");
    expect(meta.supportsPKCE()).toBe(true);
    // RFC 8414 discovery agrees with OIDC discovery on the issuer.
    const oauth = await oidc.discovery(issuer(), "any-client-id", undefined, oidc.None(), { ...insecure, algorithm: "oauth2" });
    expect(oauth.serverMetadata().issuer).toBe(server.url);
  });

  it("public client: DCR, sign-up and consent in the browser, code + PKCE, userinfo, refresh rotation", async () => {
    const config = await registerRp(
      { client_name: "RP Public App", application_type: "native", token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"] },
      oidc.None(),
    );
    const registered = config.clientMetadata();
    expect(registered.client_id).toBeTruthy();
    expect(registered.client_secret).toBeUndefined();
    expect(registered.token_endpoint_auth_method).toBe("none");

    // The person has no account yet: sign-in page -> "Create one" -> sign-up -> consent.
    const { url, checks } = await startAuthorization(config);
    const page = await browser.page();
    await page.goto(url.href);
    expect(new URL(page.url()).pathname).toBe("/sign-in");
    await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.getByRole("link", { name: "Create one" }).click()]);
    expect(new URL(page.url()).pathname).toBe("/sign-up");
    const email = uniqueEmail("rp-public");
    await fillByLabel(page, "Name", "Relying Party Person");
    await fillByLabel(page, "E-mail", email);
    await fillByLabel(page, "Password", "correct horse battery staple");
    await submitWith(page, "Create account");
    const callbackUrl = await allow(page, "RP Public App");
    expect(callbackUrl.searchParams.get("iss")).toBe(server.url);

    // openid-client checks state, iss (RFC 9207), PKCE, and the ID token: JWKS signature, iss, aud, nonce.
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, checks);
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
    expect(tokens.scope).toBe(SCOPE);
    expect(tokens.refresh_token).toBeTruthy();
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: server.url, aud: registered.client_id, nonce: checks.expectedNonce });
    expect(typeof claims.sub).toBe("string");

    const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(userinfo).toMatchObject({ sub: claims.sub, email, name: "Relying Party Person" });

    // Refresh: new tokens, a rotated refresh token, same subject.
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).toBeTruthy();
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.refresh_token).toBeTruthy();
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    if (refreshed.id_token) expect(refreshed.claims()).toMatchObject({ sub: claims.sub, aud: registered.client_id });
    await expect(oidc.fetchUserInfo(config, refreshed.access_token, claims.sub)).resolves.toMatchObject({ sub: claims.sub });

    // After rotation the old refresh token is refused.
    await expect(oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).resolves.toBe("invalid_grant");
  });

  it("confidential client: client_secret_basic, introspection (RFC 7662) and revocation (RFC 7009)", async () => {
    const config = await registerRp(
      { client_name: "RP Confidential App", application_type: "web", token_endpoint_auth_method: "client_secret_basic", grant_types: ["authorization_code", "refresh_token"] },
      oidc.ClientSecretBasic(),
    );
    const registered = config.clientMetadata();
    expect(typeof registered.client_secret).toBe("string");
    expect(registered.token_endpoint_auth_method).toBe("client_secret_basic");

    const person = await signUp(server);
    const { url, checks } = await startAuthorization(config);
    const page = await browser.page();
    await page.goto(url.href);
    await signInThroughPage(page, person);
    const tokens = await oidc.authorizationCodeGrant(config, await allow(page, "RP Confidential App"), checks);
    expect(tokens.claims()).toMatchObject({ sub: person.user.id, aud: registered.client_id });

    const active = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(active.active).toBe(true);
    expect(active).toMatchObject({ client_id: registered.client_id, sub: person.user.id, iss: server.url });
    expect(active.scope?.split(" ")).toEqual(expect.arrayContaining(["openid", "email"]));

    await expect(oidc.tokenRevocation(config, tokens.access_token)).resolves.toBeUndefined();
    await expect(oidc.tokenIntrospection(config, tokens.access_token)).resolves.toMatchObject({ active: false });
    await expect(oidc.fetchUserInfo(config, tokens.access_token, person.user.id)).rejects.toThrow();

    // RFC 7009 §2.2: an unknown (or already revoked) token still gets 200.
    await expect(oidc.tokenRevocation(config, "no-such-token-" + oidc.randomState())).resolves.toBeUndefined();
    await expect(oidc.tokenRevocation(config, tokens.access_token)).resolves.toBeUndefined();

    // Revoking the refresh token ends the grant: it can no longer be used.
    await expect(oidc.tokenIntrospection(config, tokens.refresh_token!)).resolves.toMatchObject({ active: true });
    await oidc.tokenRevocation(config, tokens.refresh_token!, { token_type_hint: "refresh_token" });
    await expect(oidc.tokenIntrospection(config, tokens.refresh_token!)).resolves.toMatchObject({ active: false });
    await expect(oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!))).resolves.toBe("invalid_grant");
  });

  it("confidential client: refuses introspection with a wrong secret", async () => {
    const config = await registerRp(
      { client_name: "RP Post App", application_type: "web", token_endpoint_auth_method: "client_secret_post", grant_types: ["authorization_code"] },
      oidc.ClientSecretPost(),
    );
    const wrong = new oidc.Configuration(config.serverMetadata(), config.clientMetadata().client_id, undefined, oidc.ClientSecretPost("not-the-secret"));
    oidc.allowInsecureRequests(wrong);
    await expect(oauthError(oidc.tokenIntrospection(wrong, "whatever"))).resolves.toBe("invalid_client");
  });
});

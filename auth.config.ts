import { passkey } from "@better-auth/passkey";
import { oauthProvider } from "@better-auth/oauth-provider";
import { betterAuth, type BetterAuthOptions } from "better-auth";
import { admin, genericOAuth, jwt, twoFactor } from "better-auth/plugins";
import type { Redis } from "ioredis";
import { createCollaborators, type Collaborators } from "./collaborators.js";
import { createDb, type DatabaseHandle } from "./lib/db/connection.js";
import { withAtomicRefresh } from "./lib/atomic-refresh.js";
import { fastRefreshOptions, withFastRefresh } from "./plugins/fast-lane/refresh.js";
import { withFastIntrospection } from "./plugins/fast-lane/introspect.js";
import { oauthTokenStore } from "./plugins/oauth-store/introspection.js";
import { BASE_PATH, MCP_PATH } from "./lib/mount-paths.js";
import { CLIENT_IP_HEADER } from "./lib/client-address.js";
import { issuerPath } from "./lib/path-prefix.js";
import { loadEnv, type Config } from "./lib/env.js";
import { createLogger, type Logger } from "./lib/logger.js";
import { limitAuthHandler } from "./lib/auth-limits.js";
import { AUTH_PATHS } from "./lib/auth-endpoints.js";
import { atTheEdge } from "./lib/auth-request.js";
import { atPublicOrigin } from "./lib/public-origin.js";
import { redisSecondaryStorage } from "./lib/redis.js";
import { builtInSocialProviders, oidcProviders, socialTrustedOrigins } from "./lib/social-providers.js";
import { accountEmail } from "./plugins/account-email/index.js";
import { revokeUserOAuthTokens } from "./plugins/oauth-store/grants.js";
import { accountResponses } from "./plugins/account-responses/index.js";
import { defaultScopePlugin } from "./plugins/default-scope/index.js";
import { claimsPolicy } from "./plugins/claims-policy/index.js";
import { organizations } from "./plugins/organizations/index.js";
import { passkeyRules } from "./plugins/passkey-rules/index.js";
import { profileFields } from "./plugins/profile-fields/index.js";
import { bapClaims } from "./plugins/bap-identity/claims.js";
import { findSelectedIdentity, IDENTITIES_IN_FORCE, selectedIdentityReader, type BapIdentity } from "./plugins/bap-identity/store.js";
import { bapIdentity } from "./plugins/bap-identity/index.js";
import { memberKey } from "./plugins/member-key/index.js";
import { rpInitiatedLogout } from "./plugins/rp-initiated-logout/index.js";
import { tokenRevocation } from "./plugins/token-revocation/index.js";
import { registrationManagement } from "./plugins/registration-management/index.js";
import { registrationPolicy } from "./plugins/registration-policy/index.js";
import { clientMetadataDocuments } from "./plugins/client-metadata-documents/index.js";
import { resourcePolicy } from "./plugins/resource-policy/index.js";
import { tokenExchange } from "./plugins/token-exchange/index.js";
import { authorizationDetails } from "./plugins/authorization-details/index.js";
import { pushedAuthorization } from "./plugins/pushed-authorization/index.js";
import { ciba } from "./plugins/ciba/index.js";
import { ID_JAG_TOKEN_TYPE, idJag } from "./plugins/id-jag/index.js";
import { assertTokenForUserInfo } from "./plugins/resource-policy/userinfo-audience.js";
import { keySignIn } from "./plugins/key-sign-in/index.js";
import { keySignInTwoFactor } from "./plugins/key-sign-in/two-factor.js";
import { social } from "./plugins/social/index.js";
import { backup, BACKUP_SCOPES } from "./plugins/backup/index.js";
import { callbackUrls } from "./plugins/callback-urls/index.js";
import { userInput } from "./plugins/user-input/index.js";
import { agents, assertUniqueEndpointKeys } from "./plugins/agents/index.js";
import { deviceGrant } from "./plugins/device/index.js";
import { dpop, dpopOptions } from "./plugins/dpop/index.js";
import { oauthBearer } from "./plugins/oauth-bearer/index.js";
import { sessionBearer } from "./plugins/session-bearer/index.js";
import { subscriptions } from "./plugins/subscriptions/index.js";
import { analytics } from "./plugins/analytics/index.js";
import { createTierService, NO_TIER_NFTS, type TierService } from "./plugins/subscriptions/ownership.js";
import { wallet } from "./plugins/wallet/index.js";
import { domainVerification } from "./plugins/domain-verification/index.js";
import { branding } from "./plugins/branding/index.js";
import { brandMail } from "./plugins/branding/mail.js";
import { certificates } from "./plugins/certificates/index.js";
import { metrics } from "./plugins/metrics/index.js";
import { audit } from "./plugins/audit/index.js";
import { recordAuditEvent } from "./plugins/audit/store.js";
import { jobLeases } from "./plugins/job-lease/index.js";
import { MACHINE_SCOPES, machineClients } from "./plugins/machine-clients/index.js";
import { clientKeys } from "./plugins/client-keys/index.js";
import { hostClients } from "./plugins/host-clients/index.js";
import { readsOncePerRequest } from "./plugins/core-store/request-reads.js";
import { assertionKeysInsertedQuietly } from "./plugins/oauth-store/assertion-keys.js";

export interface AuthDeps {
  config: Config;
  database: DatabaseHandle;
  logger: Logger;
  redis?: Redis;
  /** Built once by the composition root and shared with the app's routes (collaborators.ts). */
  shared: Collaborators;
  /** The tier of each user from NFT ownership (server.ts shares one with the routes). */
  tiers?: TierService;
}

/** Scopes offered to clients: the spec's, the backup routes' own (plugins/backup), then the machine clients' (plugins/machine-clients). */
export const SCOPES = ["openid", "profile", "email", "offline_access", BACKUP_SCOPES.read, BACKUP_SCOPES.write, MACHINE_SCOPES.service] as const;
/** The claims we issue, advertised in discovery. */
export const CLAIMS = ["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "bap_id", "bap", "pubkey", "name", "picture", "email", "email_verified"];

const HOUR = 60 * 60;
const DAY = 24 * HOUR;

function buildOptions({ config, database, logger, redis, shared, tiers }: AuthDeps) {
  const send = shared.mailer;
  const bitcoinAuth = shared.bitcoinAuth.auth;
  // Every fetch of a URL that someone else chose goes through the one guarded fetcher (SSRF).
  const { safeFetch } = shared;
  // Client ID metadata documents are small (the draft suggests 5 KB): their own deadline and cap.
  const metadataFetch = safeFetch.withLimits({ timeoutMs: config.clientMetadataTimeoutMs, maxBytes: 5 * 1024 });
  // A client's private_key_jwt key set at its jwks_uri (plugins/client-keys): the same deadline, 64 KiB as oauth-provider allows.
  const keyFetch = safeFetch.withLimits({ timeoutMs: config.clientMetadataTimeoutMs, maxBytes: 64 * 1024 });
  const secondFactor = twoFactor({ issuer: new URL(config.authUrl).host });
  const url = (path: string) => `${config.authUrl}${path}`;
  const origin = new URL(config.authUrl).origin;
  // Our pages as oauth-provider sends browsers to them: under AUTH_URL's path, if it has one (lib/path-prefix.ts).
  const page = (path: string) => `${issuerPath(config.authUrl)}${path}`;
  // Which resources a client may ask for: any https resource the person consents to, or a
  // client's allow-list; one resource per token request (plugins/resource-policy).
  const resources = resourcePolicy({ db: database.db, ownResources: [url(MCP_PATH)] });
  // RFC 9396: authorization_details at authorize, carried into the access token and introspection.
  const details = authorizationDetails({ db: database.db });
  // RFC 9126: authorization requests pushed to /oauth2/par, redeemed once by request_uri.
  const pushed = pushedAuthorization({ ttl: config.par.requestUriTtl, required: config.par.required, scopes: SCOPES, policy: resources.policy, endpointUrl: url(`${BASE_PATH}${AUTH_PATHS.par}`) });
  const selectedIdentity = selectedIdentityReader(database);
  const userInfoProfile = userInfoProfileClaims(selectedIdentity);
  // OpenID CIBA: an agent asks a person's approval out of band; the person answers on our /ciba page.
  const backchannel = ciba({
    db: database.db,
    send,
    approvalUrl: (id) => url(`/ciba/${encodeURIComponent(id)}`),
    ttl: config.ciba.requestTtl,
    pollInterval: config.ciba.pollInterval,
    maxPending: config.ciba.maxPending,
    safeFetch,
    development: config.env !== "production",
    keySignInPath: `/sign-in/${config.sigmaServiceName}`,
    logger,
  });
  // RFC 8693: an agent exchanges a person's access token for a delegated one (`act`), within that policy.
  // ID-JAG: identity assertions for other authorization servers (by token exchange), and theirs redeemed here (JWT bearer).
  const assertions = idJag({ issuer: config.authUrl, audiences: config.idJag.audiences, trustedIssuers: config.idJag.trustedIssuers, safeFetch, policy: resources.policy, ownResources: [url(MCP_PATH)] });
  const exchange = tokenExchange({
    db: database.db,
    policy: resources.policy,
    ownResources: [url(MCP_PATH)],
    maxDepth: config.tokenExchangeMaxDepth,
    claims: accessTokenClaims,
    ...(assertions.issue ? { otherTokenTypes: { [ID_JAG_TOKEN_TYPE]: assertions.issue } } : {}),
  });

  return {
    appName: "Identity",
    // With a path in AUTH_URL (lib/path-prefix.ts) better-auth's endpoints are under it too: a base
    // URL with a path is taken whole, so it names the mount point itself.
    baseURL: url(BASE_PATH),
    basePath: BASE_PATH,
    secret: config.secret,
    trustedOrigins: [origin, ...socialTrustedOrigins(config.social)],
    database: { db: database.db, type: database.type },
    ...(redis ? { secondaryStorage: redisSecondaryStorage(redis) } : {}),
    // oauth-provider keeps sessions in the database even with secondary storage: tokens refer to them.
    session: { storeSessionInDatabase: true },
    emailAndPassword: {
      enabled: true,
      autoSignIn: true,
      requireEmailVerification: config.requireEmailVerification,
      revokeSessionsOnPasswordReset: true,
      // ...and the OAuth tokens too: a refresh token (offline_access) would otherwise keep
      // whoever took the account in after the owner reset the password (OWASP ASVS V3.3.3).
      async onPasswordReset({ user }) {
        if (!config.keepOAuthGrantsOnPasswordReset) await revokeUserOAuthTokens(database.db, user.id);
      },
      // With verification required, better-auth answers a sign-up for a taken address exactly as
      // for a new one (token null, a made-up user), so sign-up does not reveal which addresses
      // have accounts (OWASP ASVS V2.2.1 / V6.3.8 in 5.0); the owner is told by mail instead.
      // With verification off, sign-up answers 422 for a taken address (spec, Errors 4).
      async onExistingUserSignUp({ user }) {
        await send(
          brandMail({
            to: user.email,
            subject: "Someone tried to sign up with your e-mail",
            text: `Someone tried to create an account with ${user.email}, which already has one. If it was you, sign in or reset your password: ${url("/forgot-password")}`,
          }),
        );
      },
      async sendResetPassword({ user, url: link }) {
        // In an authorization flow through a branded client, the mail carries its brand (plugins/branding/mail.ts).
        await send(brandMail({ to: user.email, subject: "Reset your password", text: `Reset your password: ${link}` }));
      },
    },
    // With verification off, send-verification-email answers 400 (spec, Errors 5).
    ...(config.requireEmailVerification
      ? {
          emailVerification: {
            sendOnSignUp: true,
            autoSignInAfterVerification: true,
            async sendVerificationEmail({ user, url: link }) {
              await send(brandMail({ to: user.email, subject: "Verify your e-mail", text: `Verify your e-mail address: ${link}` }));
            },
          },
        }
      : {}),
    // Social sign-in (issue 4): Google, GitHub, X, Discord, Apple when configured; OIDC issuers via genericOAuth below.
    socialProviders: builtInSocialProviders(config.social),
    account: {
      // Implicit linking at sign-in stays better-auth's default (the provider must vouch for the
      // e-mail and the local address must be verified). Unlinking is decided by plugins/social:
      // it refuses to remove the last way to sign in, counting passkeys and BAP identities too.
      accountLinking: { allowUnlinkingAll: true },
      // Provider access and refresh tokens are kept encrypted with our secret, not in the clear.
      encryptOAuthTokens: true,
    },
    user: {
      // plugins/account-email replaces better-auth's /change-email: re-authentication, a link to
      // the new address before anything changes, and an undo link to the old one.
      changeEmail: { enabled: true, updateEmailWithoutVerification: false },
    },
    // Our limits replace better-auth's (its per-IP rules and the plugins' `rateLimit` entries):
    // createAuth wraps the handler with lib/auth-limits.ts, keyed as lib/limits.ts declares.
    rateLimit: { enabled: false },
    advanced: {
      ipAddress: { ipAddressHeaders: [CLIENT_IP_HEADER] },
      useSecureCookies: config.authUrl.startsWith("https://"),
      // better-auth turns its Origin/CSRF and callback-URL checks off whenever NODE_ENV=test;
      // stated here, they run the same in the test suite as in production.
      disableOriginCheck: false,
      disableCSRFCheck: false,
    },
    // The jwt plugin's session-JWT route is not part of our surface: sessions are cookies or bearer.
    // The device grant is redeemed at /oauth2/token (RFC 8628 §3.4), never for a first-party session at /device/token.
    disabledPaths: ["/token", "/device/token"],
    onAPIError: { errorURL: url("/error") },
    logger: {
      level: config.logLevel === "silent" ? "error" : config.logLevel,
      disabled: config.logLevel === "silent",
      log(level, message, ...args) {
        logger[level](message, args.length ? { args: args.map((a) => (a instanceof Error ? a.message : a)) } : undefined);
      },
    },
    telemetry: { enabled: false },
    plugins: [
      // One read of a user (by id) or an OAuth client (by client_id) per request, shared by
      // the endpoint and its hooks (plugins/core-store/request-reads.ts).
      readsOncePerRequest(),
      // A spent assertion key is told without a failed statement, so a replay inside the token
      // endpoint's transaction is still invalid_client (plugins/oauth-store/assertion-keys.ts).
      assertionKeysInsertedQuietly(database.db),
      // Then first of the rest: its after hooks count each endpoint's own answer (tokens by grant, sign-ins by method).
      metrics({ metrics: shared.metrics, keySignInPath: `/sign-in/${config.sigmaServiceName}`, analytics: shared.analytics }),
      // Per-client analytics (Pro): authorizations, people, refusals at the authorization step; its tables.
      analytics({ counter: shared.analytics }),
      // Relative callback URLs normalised, then checked (open redirects through dot segments).
      callbackUrls(),
      // Type checks on user fields that better-auth takes as any JSON (a 500 on SQLite otherwise).
      userInput(),
      bapIdentity(database.db),
      accountResponses(),
      // Name and picture rules on sign-up and update-user (length, controls, https pictures).
      profileFields({ development: config.env !== "production" }),
      accountEmail({ db: database.db, send, reauthWindow: config.emailChange.reauthWindow, confirmTtl: HOUR, undoTtl: 7 * DAY }),
      // Spec, Authentication: bearerAuth carries a session token as well as the cookie does
      // (better-auth's bearer plugin, its HMAC by node:crypto: plugins/session-bearer).
      sessionBearer(),
      jwt({
        jwt: { issuer: config.authUrl, audience: config.authUrl, expirationTime: `${config.ttl.accessToken}s` },
        // RS256: OIDC Core §15.1 makes it the one algorithm every relying party supports.
        jwks: { keyPairConfig: { alg: "RS256", modulusLength: 2048 }, rotationInterval: 90 * DAY, gracePeriod: 30 * DAY },
        disableSettingJwtHeader: true,
        // Keys read from the database at most every 30 s, not per JWKS request or signature (lib/jwks-cache.ts).
        adapter: shared.jwks.adapter,
      }),
      // Before oauthProvider: its after-hook resumes a pending authorization for any response that
      // sets a session cookie. Running two-factor's first takes that cookie back while the second
      // factor is pending, so no authorization code is minted for a half-finished sign-in; the flow
      // resumes when /two-factor/verify-* sets the real session (routes/pages/two-factor-sign-in.tsx).
      secondFactor,
      // Key sign-in stops at the same second-factor step, unless KEY_SIGN_IN_SKIPS_TWO_FACTOR.
      ...(config.keySignInSkipsTwoFactor ? [] : [keySignInTwoFactor({ twoFactor: secondFactor, signInPath: `/sign-in/${config.sigmaServiceName}` })]),
      oauthProvider({
        loginPage: page("/sign-in"),
        consentPage: page("/consent"),
        signup: { page: page("/sign-up") },
        scopes: [...SCOPES],
        // client_credentials: machine clients (plugins/machine-clients), confidential only.
        grantTypes: ["authorization_code", "refresh_token", "client_credentials"],
        advertisedMetadata: { claims_supported: CLAIMS },
        allowDynamicClientRegistration: true,
        allowUnauthenticatedClientRegistration: true,
        // RFC 8707: our own MCP server (routes/mcp.ts) is a resource any registered client may ask
        // for; with `resource` the access token is an RFC 9068 JWT whose `aud` is that resource.
        resources: [url(MCP_PATH)],
        enforcePerClientResources: false,
        resourcePolicy: resources.policy,
        requestUriResolver: pushed.resolve,
        accessTokenExpiresIn: config.ttl.accessToken,
        refreshTokenExpiresIn: config.ttl.refreshToken,
        // REFRESH_REUSE_GRACE_SECONDS: the rotated token, presented again within this window for
        // the same scopes and resource, answers the pair it got (oauth-provider keeps that answer
        // encrypted with the secret on the old token's row); later reuse revokes the grant
        // (RFC 9700 §4.14.2). Above 0 the fast lane declines every refresh (unsupportedOption).
        refreshTokenReuseInterval: config.ttl.refreshReuseGrace,
        codeExpiresIn: config.ttl.code,
        idTokenExpiresIn: config.ttl.idToken,
        storeClientSecret: "hashed",
        storeTokens: "hashed",
        // RFC 9449: a token request with a DPoP proof gets tokens bound to its key (plugins/dpop).
        dpop: dpopOptions(shared.dpopReplay),
        // Back-channel logout tokens go out through the guarded fetcher: a logout URI whose name
        // resolves to an inside address is refused at delivery, not only its literal at registration.
        backchannelLogoutFetch: safeFetch,
        // The BAP identity a grant speaks for: chosen on the consent page (kept on the session),
        // else the primary one. It becomes the consent's and the tokens' referenceId.
        postLogin: {
          page: page("/consent"),
          shouldRedirect: async () => false,
          async consentReferenceId({ user, session }) {
            const row = user ? await findSelectedIdentity(database.db, user.id, (session as { selectedBapId?: string | null } | undefined)?.selectedBapId) : null;
            return row?.bapId;
          },
        },
        // Tokens carry the selected identity as `bap_id`, so userinfo (and introspection) can name it.
        customAccessTokenClaims: accessTokenClaims,
        async customUserInfoClaims({ user, scopes, jwt }) {
          // Userinfo takes only a token for itself: opaque, or a JWT whose aud names it (RFC 9068 §4).
          assertTokenForUserInfo(jwt, url(`${BASE_PATH}${AUTH_PATHS.userinfo}`));
          return userInfoProfile({ user, scopes, jwt });
        },
        // ID-token claims come through an extension: it is the hook that receives the referenceId.
        extensions: [
          { claims: { idToken: ({ user, scopes, referenceId }) => (user ? profileClaims(selectedIdentity, user, scopes, referenceId) : {}) } },
          // A client_id that is an https URL names its own client ID metadata document (MCP clients).
          { clientDiscovery: clientMetadataDocuments({ fetch: metadataFetch }) },
          exchange.extension,
          details.extension,
          pushed.extension,
          backchannel.extension,
          assertions.extension,
        ],
      }),
      // ES256K proofs (Bitcoin keys) for oauth-provider's DPoP check; server nonces at the token endpoint.
      dpop({ nonces: shared.dpopNonces }),
      // The token endpoint's side of that policy: a grant authorized for no resource gets none.
      resources.plugin,
      exchange.plugin,
      details.plugin,
      pushed.plugin,
      backchannel.plugin,
      assertions.plugin,
      // RFC 8628: device codes at /device/code, the grant at /oauth2/token, people at our /device page.
      deviceGrant({ verificationUri: url("/device"), codeTtl: config.device.codeTtl, pollInterval: config.device.pollInterval }),
      rpInitiatedLogout(),
      tokenRevocation(),
      claimsPolicy(),
      // An authorization request without `scope` asks for sign-in and profile, not all the client
      // registered; `offline_access` counts only from a client registered for refresh_token.
      defaultScopePlugin(),
      memberKey({ bitcoinAuth, tokenPath: `${BASE_PATH}${AUTH_PATHS.token}` }),
      keySignIn({ db: database.db, bitcoinAuth, serviceName: config.sigmaServiceName, basePath: BASE_PATH }),
      ...(config.social.oidc.length ? [genericOAuth({ config: oidcProviders(config.social) })] : []),
      social(database.db),
      // The OAuth access-token check for our own routes (server-only; /api/backup uses it).
      oauthBearer(),
      backup(),
      wallet(),
      domainVerification(),
      branding({ errorUrl: url("/error") }),
      certificates(),
      // private_key_jwt keys at a client's jwks_uri, fetched through the guarded fetcher at
      // registration and again on rotation. Before registrationPolicy (its hook copies the body).
      clientKeys({ safeFetch: keyFetch, development: config.env !== "production", logger }),
      // An enrolled agent host as its own private_key_jwt client: its key, its status, checked at every client authentication.
      hostClients(),
      registrationPolicy({ development: config.env !== "production" }),
      // A confidential client registered for client_credentials gets the machine scopes.
      machineClients(),
      // RFC 7592: read, update and delete a registration with its registration access token.
      registrationManagement({ db: database.db, baseURL: `${config.authUrl}${BASE_PATH}`, safeFetch: keyFetch, development: config.env !== "production" }),
      // Paid tiers: their tables, subscriptionTier on the session, the tier's OAuth-client limit.
      subscriptions({ tiers: tiers ?? createTierService({ db: database.db, checker: NO_TIER_NFTS, logger }) }),
      admin(),
      organizations({ send, invitationUrl: (id) => url(`/invitations/${encodeURIComponent(id)}`) }),
      // WebAuthn: the RP ID is AUTH_URL's host name and the only origin accepted is AUTH_URL itself
      // (an IP-address host cannot be an RP ID; lib/env.ts warns). passkeyRules keeps the last way in.
      passkey({ rpID: new URL(config.authUrl).hostname, rpName: "Identity", origin }),
      passkeyRules(database.db),
      // Agent Auth Protocol: hosts, agents, capability grants; approvals on our /agents/approve page.
      agents({
        db: database.db,
        backupMaxBytes: config.backupMaxBytes,
        ordinals: shared.ordinals,
        approvalPage: url("/agents/approve"),
        dynamicHosts: config.agents.dynamicHosts,
        sharedStorage: Boolean(redis),
        replay: bitcoinAuth.replay,
        safeFetch,
        trustProxy: config.trustProxy,
        logger,
        audit: (entry) => recordAuditEvent(database.db, logger, entry),
      }),
      // The table of background jobs' leases (server.ts starts the jobs).
      jobLeases(),
      // Last: its after-hooks see each endpoint's final answer (plugins/audit).
      audit({ db: database.db, logger, keySignInPath: `/sign-in/${config.sigmaServiceName}` }),
    ],
  } satisfies BetterAuthOptions;
}

/** What an access token says beyond RFC 7662's fields: the BAP identity it speaks for, with `profile`. */
export function accessTokenClaims({ scopes, referenceId }: { scopes: string[]; referenceId?: string }): Record<string, unknown> {
  return referenceId && scopes.includes("profile") ? { bap_id: referenceId } : {};
}

/**
 * Userinfo's own claims (customUserInfoClaims, after its audience check; the fast lane's
 * userinfo too): the profile the token's `bap_id` names, else the primary one.
 */
export function userInfoProfileClaims(selectedIdentity: ReturnType<typeof selectedIdentityReader>) {
  return ({ user, scopes, jwt }: { user: { id: string; pubkey?: unknown; readonly [IDENTITIES_IN_FORCE]?: readonly BapIdentity[] }; scopes: readonly string[]; jwt: Record<string, unknown> }) =>
    profileClaims(selectedIdentity, user, scopes, typeof jwt.bap_id === "string" ? jwt.bap_id : undefined);
}

/** `profile` scope: the selected BAP profile's `bap_id`, `bap`, and the account's `pubkey`. */
async function profileClaims(
  selectedIdentity: ReturnType<typeof selectedIdentityReader>,
  user: { id: string; pubkey?: unknown; readonly [IDENTITIES_IN_FORCE]?: readonly BapIdentity[] },
  scopes: readonly string[],
  referenceId?: string,
) {
  if (!scopes.includes("profile")) return {};
  // The fast refresh grant's and fast userinfo's user carries its identities, read with the token.
  const row = await selectedIdentity(user.id, referenceId, user[IDENTITIES_IN_FORCE]);
  return {
    ...(typeof user.pubkey === "string" && user.pubkey ? { pubkey: user.pubkey } : {}),
    ...(row ? bapClaims(row) : {}),
  };
}

export function createAuth(deps: AuthDeps) {
  const options = buildOptions(deps);
  assertUniqueEndpointKeys(options.plugins);
  const auth = betterAuth(options);
  // Every request through the handler (the app's catch-all, the pages' replayed forms) is read
  // once into its record (lib/auth-request.ts), then meets the limits of lib/limits.ts; a
  // refresh-token grant's writes commit together or not at all (lib/atomic-refresh.ts).
  const atomic = withAtomicRefresh((req) => auth.handler(req), deps.database);
  // Introspection of an opaque access token by its own client, from one prepared lookup
  // (plugins/fast-lane/introspect.ts). Without a path in AUTH_URL the fast lane in front of the
  // app answers it (server.ts), and a request it declined would only repeat the same lookup here,
  // so the handler takes the common case only where the lane is off.
  const prefix = issuerPath(deps.config.authUrl);
  const introspection = prefix ? withFastIntrospection(atomic, { store: oauthTokenStore(deps.database), issuer: deps.config.authUrl, claims: accessTokenClaims }) : atomic;
  // The common refresh grant likewise (plugins/fast-lane/refresh.ts), outside the atomic refresh's transaction.
  const refresh = prefix ? withFastRefresh(introspection, fastRefreshOptions({ database: deps.database, context: auth.$context, metrics: deps.shared.metrics, logger: deps.logger })) : introspection;
  const limited = limitAuthHandler(refresh, deps.shared.limits, { keyServiceName: deps.config.sigmaServiceName });
  // better-auth sees itself mounted under AUTH_URL's path, if it has one (app.ts).
  // A DPoP proof names the public URL (RFC 9449 §4.3): requests carrying one are seen at AUTH_URL's origin (lib/public-origin.ts).
  const handler = atPublicOrigin(atTheEdge(limited, `${prefix}${BASE_PATH}`, deps.config.secret), deps.config.authUrl);
  return { ...auth, handler, fetch: handler };
}

export type Auth = ReturnType<typeof createAuth>;
export type AuthOptions = ReturnType<typeof buildOptions>;
export { buildOptions as authOptions };

/**
 * For better-auth's CLI and our db scripts: an `auth` built from the environment,
 * created on first use so importing this module has no side effects.
 */
let cli: Auth | undefined;
export function cliAuth(): Auth {
  if (!cli) {
    const config = loadEnv();
    const logger = createLogger(config.logLevel);
    cli = createAuth({ config, database: createDb(config.database), logger, shared: createCollaborators({ config, logger }) });
  }
  return cli;
}

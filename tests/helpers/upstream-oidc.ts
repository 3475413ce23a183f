import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from "jose";
import Provider from "oidc-provider";

/** A person known to the upstream provider. */
export interface UpstreamUser {
  sub: string;
  email: string;
  emailVerified?: boolean;
  name?: string;
}

/**
 * A real OpenID Provider (node-oidc-provider) on a loopback port, standing in for Google & co.
 * Static confidential clients (one per provider id we configure); accounts come from `users`, keyed by the login typed on its
 * dev login page (any password). Its signing key is ours, so tests can also mint tokens that
 * are validly signed yet wrong in one claim. `host` defaults to 127.0.0.2 (still loopback, but
 * another site than the service on 127.0.0.1, so cookies and SameSite behave as cross-site).
 */
export async function startUpstreamOidc(opts: { clients: Array<{ clientId: string; redirectUris: string[] }>; users?: UpstreamUser[]; host?: string }) {
  const host = opts.host ?? "127.0.0.2";
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const privateJwk = { ...(await exportJWK(privateKey)), kid: "upstream-1", alg: "RS256", use: "sig" };
  const clients = opts.clients.map((c) => ({ ...c, clientSecret: randomBytes(24).toString("base64url") }));
  const users = new Map((opts.users ?? []).map((u) => [u.sub, u]));

  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const issuer = `http://${host}:${port}`;

  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      redirect_uris: c.redirectUris,
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    })),
    async findAccount(_ctx, sub) {
      const user = users.get(sub);
      if (!user) return undefined;
      return {
        accountId: sub,
        async claims() {
          return { sub, email: user.email, email_verified: user.emailVerified ?? true, name: user.name ?? sub };
        },
      };
    },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    // Scope claims in the ID token as well as at userinfo: the idToken sign-in path reads them there.
    conformIdTokenClaims: false,
    cookies: { keys: [randomBytes(32).toString("base64url")] },
    jwks: { keys: [privateJwk] },
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
  });
  // The dev login page trusts any login; keep its console warning out of the test output.
  provider.on("server_error", (_ctx, err) => console.error("upstream server_error", err));
  server.on("request", provider.callback());

  /** An ID token signed with the provider's own key (audience: the first client), for tests of claim checks. */
  async function signIdToken(claims: JWTPayload & { nonce?: string }, header: { kid?: string } = {}) {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: issuer, aud: clients[0]!.clientId, iat: now, exp: now + 300, ...claims })
      .setProtectedHeader({ alg: "RS256", kid: header.kid ?? "upstream-1", typ: "JWT" })
      .sign(privateKey);
  }

  return {
    issuer,
    /** Each static client with its generated secret, in the order given. */
    clients,
    publicKey,
    signIdToken,
    /** Makes a person known to the provider (its login page takes their `sub` as the login). */
    addUser(user: UpstreamUser) {
      users.set(user.sub, user);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type UpstreamOidc = Awaited<ReturnType<typeof startUpstreamOidc>>;

/**
 * The OIDC_<n>_* settings that configure our server's generic OpenID provider number `n`: the
 * upstream's issuer and its `index`th client.
 */
export function providerEnv(n: number, upstream: UpstreamOidc, opts: { id: string; name?: string; index?: number }): Record<string, string> {
  const client = upstream.clients[opts.index ?? 0]!;
  return {
    [`OIDC_${n}_ID`]: opts.id,
    ...(opts.name ? { [`OIDC_${n}_NAME`]: opts.name } : {}),
    [`OIDC_${n}_ISSUER`]: upstream.issuer,
    [`OIDC_${n}_CLIENT_ID`]: client.clientId,
    [`OIDC_${n}_CLIENT_SECRET`]: client.clientSecret,
  };
}

/**
 * The reference of `npm run bench -- --reference`: node-oidc-provider (the `oidc-provider`
 * devDependency) in a child process of its own, as our server runs, configured like the
 * comparison in the issue: its in-memory adapter, refresh-token rotation on, one confidential
 * client (client_secret_basic), `openid offline_access`, introspection on, one RS256 key.
 * The adapter is a plain Map (MemoryStore below): oidc-provider's own development adapter is an
 * LRU of 1,000 entries, which a refresh run evicts the introspected token and grants from.
 *
 * Its tokens are minted through its own models (Grant, AccessToken, RefreshToken, as its
 * authorization-code grant would save them) at `POST /__bench/mint?refresh=N`, a route only
 * this script adds: the measured routes are discovery, JWKS, introspection and the refresh
 * grant, and how the first tokens came to exist does not change what those routes do.
 * Printed when listening: `{"ready": url, "clientId", "clientSecret"}`.
 */
import { generateKeyPairSync, randomBytes } from "node:crypto";
import Provider from "oidc-provider";

export const REFERENCE_PATHS = {
  discovery: "/.well-known/openid-configuration",
  jwks: "/jwks",
  introspect: "/token/introspection",
  token: "/token",
} as const;

const SCOPE = "openid offline_access";

type Payload = Record<string, unknown> & { grantId?: string; uid?: string; userCode?: string; consumed?: number };

/** oidc-provider's adapter interface over one Map per model, with nothing evicted but what it destroys. */
class MemoryStore {
  private static rows = new Map<string, Payload>();
  constructor(private readonly model: string) {}
  private key = (id: string) => `${this.model}:${id}`;
  async upsert(id: string, payload: Payload) {
    MemoryStore.rows.set(this.key(id), payload);
  }
  async find(id: string) {
    return MemoryStore.rows.get(this.key(id));
  }
  async findByUid(uid: string) {
    for (const row of MemoryStore.rows.values()) if (row.uid === uid) return row;
    return undefined;
  }
  async findByUserCode(code: string) {
    for (const row of MemoryStore.rows.values()) if (row.userCode === code) return row;
    return undefined;
  }
  async consume(id: string) {
    const row = MemoryStore.rows.get(this.key(id));
    if (row) row.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id: string) {
    MemoryStore.rows.delete(this.key(id));
  }
  async revokeByGrantId(grantId: string) {
    for (const [key, row] of MemoryStore.rows) if (row.grantId === grantId) MemoryStore.rows.delete(key);
  }
}

export async function serveReference(port: number) {
  const url = `http://127.0.0.1:${port}`;
  const clientId = "bench-reference";
  const clientSecret = randomBytes(32).toString("base64url");
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: "jwk" }), kid: "bench", alg: "RS256", use: "sig" };
  const provider = new Provider(url, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: ["https://client.example/callback"],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      },
    ],
    adapter: MemoryStore as never,
    jwks: { keys: [jwk as never] },
    cookies: { keys: [randomBytes(32).toString("base64url")] },
    scopes: ["openid", "offline_access"],
    features: {
      devInteractions: { enabled: false },
      // RFC 7662; a client may introspect the tokens issued to it.
      introspection: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
    },
    rotateRefreshToken: true,
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
  });
  provider.use(async (ctx, next) => {
    if (ctx.path !== "/__bench/mint" || ctx.method !== "POST") return next();
    const count = Number(ctx.query.refresh ?? 0);
    const client = await provider.Client.find(clientId);
    const mint = async () => {
      const grant = new provider.Grant({ accountId: "bench-person", clientId });
      grant.addOIDCScope(SCOPE);
      const grantId = await grant.save();
      const base = { accountId: "bench-person", client: client!, grantId, gty: "authorization_code", scope: SCOPE };
      const access = await new provider.AccessToken(base).save();
      const refresh = await new provider.RefreshToken({ ...base, authTime: Math.floor(Date.now() / 1000) }).save();
      return { access, refresh };
    };
    const first = await mint();
    const refresh: string[] = [];
    while (refresh.length < count) refresh.push((await mint()).refresh);
    ctx.body = { accessToken: first.access, refreshTokens: refresh };
  });
  await new Promise<void>((ok) => provider.listen(port, "127.0.0.1", ok));
  process.stdout.write(JSON.stringify({ ready: url, clientId, clientSecret }) + "\n");
  process.on("SIGTERM", () => process.exit(0));
  process.on("SIGINT", () => process.exit(0));
}

import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";

/** The spec's resources ("Resources and their fields") as tables and columns. */
const SPEC: Record<string, string[]> = {
  user: ["id", "name", "email", "emailVerified", "image", "createdAt", "updatedAt", "role", "banned", "banReason", "banExpires", "pubkey", "subscriptionTier", "twoFactorEnabled", "onboarding_completed"],
  session: ["id", "expiresAt", "token", "createdAt", "updatedAt", "ipAddress", "userAgent", "userId", "impersonatedBy", "activeOrganizationId"],
  account: ["id", "accountId", "providerId", "userId", "accessToken", "refreshToken", "idToken", "accessTokenExpiresAt", "refreshTokenExpiresAt", "scope", "password", "createdAt", "updatedAt"],
  oauthClient: [
    "id", "ownerBapId", "memberPubkey", "clientId", "clientSecret", "disabled", "skipConsent", "enableEndSession", "subjectType", "scopes", "userId", "createdAt", "updatedAt",
    "name", "uri", "icon", "contacts", "tos", "policy", "softwareId", "softwareVersion", "softwareStatement", "redirectUris", "postLogoutRedirectUris",
    "tokenEndpointAuthMethod", "grantTypes", "responseTypes", "public", "type", "requirePKCE", "referenceId", "metadata",
  ],
  organization: ["id", "name", "slug", "logo", "createdAt", "metadata"],
  member: ["id", "organizationId", "userId", "role", "createdAt"],
  invitation: ["id", "organizationId", "email", "role", "status", "expiresAt", "createdAt", "inviterId"],
  jwks: ["id", "publicKey", "privateKey", "createdAt", "expiresAt"],
  passkey: ["id", "name", "publicKey", "userId", "credentialID", "counter", "deviceType", "backedUp", "transports", "createdAt", "aaguid"],
  oauthRefreshToken: ["id", "token", "clientId", "sessionId", "userId", "referenceId", "expiresAt", "createdAt", "revoked", "authTime", "scopes"],
  oauthAccessToken: ["id", "token", "clientId", "sessionId", "userId", "referenceId", "refreshId", "expiresAt", "createdAt", "scopes"],
  oauthConsent: ["id", "clientId", "userId", "referenceId", "scopes", "createdAt", "updatedAt"],
  twoFactor: ["id", "secret", "backupCodes", "userId", "verified"],
  deviceCode: ["id", "deviceCode", "userCode", "userId", "expiresAt", "status", "lastPolledAt", "pollingInterval", "clientId", "scope"],
  bapIdentity: ["id", "userId", "bapId", "rootAddress", "currentAddress", "memberPubkey", "identity", "isPrimary", "createdAt", "updatedAt"],
};

const server = useTestServer();

describe("schema", () => {
  it("has every table and column the spec names", async () => {
    const tables = await server.db.introspection.getTables();
    const byName = new Map(tables.map((t) => [t.name, new Set(t.columns.map((c) => c.name))]));
    for (const [table, columns] of Object.entries(SPEC)) {
      const actual = byName.get(table);
      expect(actual, `table ${table}`).toBeDefined();
      const missing = columns.filter((c) => !actual!.has(c));
      expect(missing, `missing columns in ${table}`).toEqual([]);
    }
  });

  it("has our own columns beyond the spec: a BAP identity's suspension by a mailbox proof", async () => {
    const tables = await server.db.introspection.getTables();
    const columns = tables.find((t) => t.name === "bapIdentity")?.columns ?? [];
    expect(columns.find((c) => c.name === "suspendedAt")).toMatchObject({ isNullable: true });
  });

  it("applies the spec's defaults: subscriptionTier free, onboarding_completed false, member role member, invitation pending", async () => {
    const email = `defaults-${Date.now()}@example.com`;
    const res = await server.api("/api/auth/sign-up/email", { body: { name: "D", email, password: "a long enough password" } });
    expect(res.status).toBe(200);
    expect(res.json.user).toMatchObject({ subscriptionTier: "free", onboarding_completed: false, emailVerified: false, banned: false, role: "user", twoFactorEnabled: false });
    const cookie = res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
    const org = await server.api("/api/auth/organization/create", { cookie, body: { name: "Acme", slug: `acme-${Date.now()}` } });
    expect(org.status).toBe(200);
    const invite = await server.api("/api/auth/organization/invite-member", { cookie, body: { email: `invitee-${Date.now()}@example.com`, role: "member", organizationId: org.json.id } });
    expect(invite.status).toBe(200);
    expect(invite.json.status).toBe("pending");
  });
});

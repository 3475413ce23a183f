import type { Schema } from "./components.js";

/**
 * The bodies our own routes answer (routes/ and the plugins they call), as component schemas,
 * so a generated client names them. Each mirrors the function that builds the answer, named
 * in its description.
 */

const str: Schema = { type: "string" };
const strOrNull: Schema = { type: ["string", "null"] };
const bool: Schema = { type: "boolean" };
const int: Schema = { type: "integer" };
const num: Schema = { type: "number" };
const dateTime: Schema = { type: "string", format: "date-time" };
const dateTimeOrNull: Schema = { type: ["string", "null"], format: "date-time" };
const strings: Schema = { type: "array", items: str };
export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** An object of these properties, all of them always present unless `optional` names them. */
export function record(description: string, properties: Record<string, Schema>, optional: string[] = []): Schema {
  return { type: "object", description, properties, required: Object.keys(properties).filter((k) => !optional.includes(k)) };
}

export const OK_STATUS: Schema = record("Done.", { status: { type: "string", const: "OK" } });

export const ourSchemas: Record<string, Schema> = {
  AuthorizedApp: record("An OAuth client the user has consented to (plugins/oauth-store/grants.ts listAuthorizedApps).", {
    clientId: str,
    name: str,
    uri: strOrNull,
    icon: strOrNull,
    scopes: strings,
    authorizedAt: dateTime,
    updatedAt: dateTime,
  }),
  BapIdentityRegistration: record("A BAP identity registered to the account (plugins/bap-identity/registrations.ts registrationRecord).", {
    id: str,
    identity_key: { type: "string", description: "The bapId." },
    root_address: str,
    current_address: str,
    identity: { description: "The identity document as registered (JSON), or null." },
    is_primary: bool,
    name: strOrNull,
    counter: { type: ["integer", "null"] },
    member_pubkey: strOrNull,
    account_pubkey: strOrNull,
    suspended: { type: "boolean", description: "Refused at key sign-in until the owner confirms it (POST /api/user/bap-ids/confirm)." },
    created_at: dateTime,
    updated_at: dateTime,
  }),
  BapIdentityPublic: record("What anyone may look up by member key (routes/profile/shared.ts publicRecord).", {
    id: str,
    identity_key: str,
    root_address: str,
    current_address: str,
    identity: { description: "The identity document (JSON), or null." },
  }),
  BapProfile: {
    description: "An identity's public record, its latest publication, and for its owner the unpublished draft (routes/profile/bap-profile.ts getProfile).",
    allOf: [
      ref("BapIdentityPublic"),
      record(
        "Publication and draft.",
        { published: bool, txid: { type: "string", pattern: "^[0-9a-f]{64}$" }, publishedAt: dateTime, draft: record("The owner's draft.", { profile: { description: "The draft document (JSON), or null." }, updatedAt: dateTime }), unpublished: bool },
        ["txid", "publishedAt", "draft", "unpublished"],
      ),
    ],
  },
  BapProfileDraft: record("A saved draft (routes/profile/bap-profile.ts).", { bapId: str, profile: { description: "The draft document (JSON)." }, draft: { type: "boolean", const: true }, unpublished: { type: "boolean", const: true } }),
  BapPublication: record("A recorded profile publication (routes/profile/bap-profile.ts).", {
    bapId: str,
    txid: { type: "string", pattern: "^[0-9a-f]{64}$" },
    profile: { description: "The published profile document (JSON), or null." },
    kind: str,
    fundedBy: strOrNull,
    publishedAt: dateTime,
  }),
  BackupRecord: record("An encrypted backup (routes/backup/access.ts found): ciphertext only.", {
    bapId: str,
    backup: { type: "string", description: "bitcoin-backup ciphertext." },
    lastUpdated: dateTime,
    generation: int,
  }),
  BackupStatus: record("Whether the caller's identity has a backup (plugins/backup/service.ts backupStatus).", {
    hasBackup: bool,
    updatedAt: dateTimeOrNull,
    userId: str,
    bapId: strOrNull,
    generation: { type: ["integer", "null"] },
    linkedOAuthAccounts: { type: "array", items: record("A recovery link.", { provider: str, accountId: str, linkedAt: dateTime }) },
  }),
  WalletConnection: record("A wallet connected to an identity (routes/wallet/wallet.ts view).", {
    address: str,
    bapId: str,
    pubkey: strOrNull,
    provider: str,
    connectionMethod: str,
    isPrimary: bool,
    isPayment: bool,
    paymentAddress: strOrNull,
    connectedAt: dateTime,
    lastVerified: dateTime,
  }),
  Nft: record(
    "An ordinal held by a wallet, as the ordinals indexer lists it (plugins/wallet/ordinals.ts).",
    { txid: str, vout: int, outpoint: str, satoshis: num, owner: str, origin: { type: "object", properties: { outpoint: str, data: { type: "object" } }, required: ["outpoint"] }, height: num, idx: num },
    ["owner", "origin", "height", "idx"],
  ),
  TierStatus: record(
    "The user's tier, derived from the subscription NFTs their wallets hold (plugins/subscriptions/ownership.ts).",
    {
      tier: { type: "string", enum: ["free", "plus", "pro"] },
      isActive: bool,
      nftOrigin: str,
      walletAddress: str,
      lastVerified: dateTime,
      periodEnd: { type: "string", format: "date-time", description: "When the paid period ends: the tier falls back to free then unless it is renewed." },
      renews: { type: "boolean", description: "Whether the subscription renews at periodEnd (false: cancelled or over)." },
    },
    ["nftOrigin", "walletAddress", "lastVerified", "periodEnd", "renews"],
  ),
  DomainVerification: record("A domain verification and the challenge to meet (routes/domain-verifications/domain-verifications.ts view).", {
    id: str,
    bapId: str,
    domain: str,
    method: { type: "string", enum: ["dns", "https"] },
    oauthClientId: strOrNull,
    status: { type: "string", enum: ["pending", "verified", "expired", "failed"] },
    challenge: {
      type: "object",
      description: "dns: a TXT record `name` with `value`; https: a file at `url` with `content`.",
      properties: { token: str, method: { type: "string", enum: ["dns", "https"] }, name: str, value: str, url: { type: "string", format: "uri" }, content: str, expiresAt: dateTime },
      required: ["token", "method", "expiresAt"],
    },
    verifiedAt: dateTimeOrNull,
    expiresAt: dateTimeOrNull,
    lastCheckedAt: dateTimeOrNull,
    failureReason: strOrNull,
    createdAt: dateTime,
  }),
  CertificateType: record("A catalog entry (plugins/certificates/catalog.ts describeCertificateType).", {
    key: str,
    typeId: { type: "string", description: "Base64 type ID, immutable." },
    slug: str,
    owner: { type: "string", enum: ["Ecosystem", "Standard", "Service"] },
    schemaVersion: int,
    displayName: str,
    description: str,
    fields: strings,
    fieldFriendlyNames: { type: "object", additionalProperties: str },
    documentationUrl: { type: "string", format: "uri" },
    iconUrl: { type: "string", format: "uri" },
  }),
  RevocationView: record("What a verifier should conclude from a certificate's revocation state (plugins/certificates/revocation.ts).", {
    state: { type: "string", enum: ["none", "prepared", "broadcast", "observed", "confirmed"], description: "`none`: not revoked." },
    revoked: bool,
    final: bool,
    txid: strOrNull,
    updatedAt: dateTimeOrNull,
  }),
  WalletBinding: record(
    "A BAP identity bound to a wallet identity key (routes/certificates/wallet-binding.ts).",
    { bapId: str, identityKey: str, verifiedAt: dateTimeOrNull },
  ),
  AgentGrant: record("A capability grant (plugins/agents/store.ts GrantView).", {
    id: str,
    capability: str,
    status: str,
    constraints: { description: "The grant's constraints (JSON), or null." },
    grantedBy: strOrNull,
    expiresAt: strOrNull,
    createdAt: strOrNull,
  }),
  AgentSummary: record("An agent with its grants (plugins/agents/store.ts AgentView).", {
    id: str,
    name: str,
    hostId: str,
    status: str,
    mode: str,
    createdAt: strOrNull,
    activatedAt: strOrNull,
    lastUsedAt: strOrNull,
    expiresAt: strOrNull,
    grants: { type: "array", items: ref("AgentGrant") },
  }),
  AgentHostSummary: record("An agent host (plugins/agents/store.ts HostView).", {
    id: str,
    name: strOrNull,
    status: str,
    defaultCapabilities: strings,
    createdAt: strOrNull,
    activatedAt: strOrNull,
    lastUsedAt: strOrNull,
  }),
  HostClient: record("An enrolled host's private_key_jwt client (routes/agents/host-client.ts); never a secret: there is none.", {
    client_id: str,
    host_id: str,
    token_endpoint_auth_method: { type: "string", const: "private_key_jwt" },
    grant_types: strings,
    scope: str,
  }),
};

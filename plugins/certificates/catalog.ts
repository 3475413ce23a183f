import { createHash } from "node:crypto";

/**
 * The wallet-certificate catalog (spec, "Certificate catalog entry"): the certificate types
 * this service knows, who defines each, and its fields. BRC-52 names a certificate's type by a
 * Base64 string of 32 bytes; ours is SHA-256 of `TYPE_ID_NAMESPACE/certificate-type/<key>/v<schemaVersion>`,
 * so anyone can recompute it and it never depends on where the service runs.
 *
 * Immutable (spec, Versioning 4): a type's ID and field names never change. A new field or a
 * changed meaning is a new entry (a new key, or the same key with the next schemaVersion,
 * which gives a new ID); tests/wallet/certificate-catalog.test.ts pins every ID as a literal.
 */
export const TYPE_ID_NAMESPACE = "bap-identity-provider";

/** Who defines the type: shared by the ecosystem, a published standard, or this service. */
export type CertificateOwner = "Ecosystem" | "Standard" | "Service";

export interface CertificateType {
  /** The catalog key (spec table), e.g. `emailCert`. */
  key: string;
  /** The landing page: /certificates/<slug>. */
  slug: string;
  owner: CertificateOwner;
  schemaVersion: number;
  displayName: string;
  description: string;
  /** Field names in the certificate, in order, each with the name shown to people. */
  fields: Readonly<Record<string, string>>;
}

const VERIFIED_AT = "Verified at";

export const CERTIFICATE_CATALOG: readonly CertificateType[] = Object.freeze(
  (
    [
      { key: "emailCert", slug: "email", owner: "Ecosystem", displayName: "Email address", description: "Proves control of an e-mail address.", fields: { email: "Email address" } },
      { key: "xCert", slug: "x", owner: "Ecosystem", displayName: "X account", description: "Proves control of an X (formerly Twitter) account.", fields: { userName: "User name", profilePhoto: "Profile photo" } },
      { key: "discordCert", slug: "discord", owner: "Ecosystem", displayName: "Discord account", description: "Proves control of a Discord account.", fields: { userName: "User name", profilePhoto: "Profile photo" } },
      { key: "googleCert", slug: "google", owner: "Ecosystem", displayName: "Google account", description: "Proves control of a Google account.", fields: { email: "Email address", name: "Name", profilePhoto: "Profile photo" } },
      { key: "phoneCert", slug: "phone", owner: "Ecosystem", displayName: "Phone number", description: "Proves control of a phone number.", fields: { phoneNumber: "Phone number" } },
      { key: "handleCert", slug: "handle", owner: "Standard", displayName: "Handle", description: "Binds a handle to a domain that publishes it.", fields: { domain: "Domain", handle: "Handle" } },
      {
        key: "githubCert",
        slug: "github",
        owner: "Service",
        displayName: "GitHub account",
        description: "Proves control of a GitHub account, as this service verified it by signing in with GitHub.",
        fields: { accountId: "GitHub account ID", userName: "User name", profileUrl: "Profile URL", profilePhoto: "Profile photo", verifiedAt: VERIFIED_AT },
      },
      { key: "appleCert", slug: "apple", owner: "Service", displayName: "Apple account", description: "Proves control of an Apple account, as this service verified it by Sign in with Apple.", fields: { accountId: "Apple account ID", verifiedAt: VERIFIED_AT } },
      { key: "bapWalletBinding", slug: "bap-wallet-binding", owner: "Service", displayName: "BAP wallet binding", description: "Binds a wallet to a BAP identity: the wallet signed this service's challenge for that identity.", fields: { bapId: "BAP identity", verifiedAt: VERIFIED_AT } },
      {
        key: "providerAssurance",
        slug: "provider-assurance",
        owner: "Service",
        displayName: "Provider assurance",
        description: "States how strongly an identity provider account was verified, and until when the statement holds.",
        fields: { provider: "Provider", accountId: "Account ID", assuranceLevel: "Assurance level", verifiedAt: VERIFIED_AT, expiresAt: "Expires at" },
      },
      {
        key: "organizationMembership",
        slug: "organization-membership",
        owner: "Service",
        displayName: "Organization membership",
        description: "States that the subject is a member of an organization on this service, in a role, for a period.",
        fields: { organizationId: "Organization ID", role: "Role", validFrom: "Valid from", validUntil: "Valid until" },
      },
      { key: "oauthAppOwnership", slug: "oauth-app-ownership", owner: "Service", displayName: "OAuth app ownership", description: "States that the subject's organization owns an OAuth client registered on this service.", fields: { clientId: "OAuth client ID", organizationId: "Organization ID", verifiedAt: VERIFIED_AT } },
      {
        key: "verifiedDomain",
        slug: "verified-domain",
        owner: "Service",
        displayName: "Verified domain",
        description: "States that the subject proved control of a domain by a DNS record or an HTTPS well-known file.",
        fields: { domain: "Domain", verificationMethod: "Verification method", verifiedAt: VERIFIED_AT, expiresAt: "Expires at" },
      },
    ] satisfies Omit<CertificateType, "schemaVersion">[] as Omit<CertificateType, "schemaVersion">[]
  ).map((entry): CertificateType => Object.freeze({ ...entry, schemaVersion: 1, fields: Object.freeze(entry.fields) })),
);

/** The type ID: Base64 of SHA-256 over the namespaced key and schema version (32 bytes). */
export function certificateTypeId(entry: Pick<CertificateType, "key" | "schemaVersion">): string {
  return createHash("sha256").update(`${TYPE_ID_NAMESPACE}/certificate-type/${entry.key}/v${entry.schemaVersion}`, "utf8").digest("base64");
}

const byTypeId = new Map(CERTIFICATE_CATALOG.map((entry) => [certificateTypeId(entry), entry]));
const bySlug = new Map(CERTIFICATE_CATALOG.map((entry) => [entry.slug, entry]));
const byKey = new Map(CERTIFICATE_CATALOG.map((entry) => [entry.key, entry]));

export const findCertificateTypeById = (typeId: string): CertificateType | null => byTypeId.get(typeId) ?? null;
export const findCertificateTypeBySlug = (slug: string): CertificateType | null => bySlug.get(slug) ?? null;
export const findCertificateTypeByKey = (key: string): CertificateType | null => byKey.get(key) ?? null;

/** Where a type's landing page (its documentation) and icon live on this service. */
export const certificatePagePath = (entry: Pick<CertificateType, "slug">) => `/certificates/${entry.slug}`;
export const certificateIconPath = (entry: Pick<CertificateType, "slug">) => `/certificates/${entry.slug}/icon.svg`;

/** One entry as GET /api/certificates/types answers it; URLs are absolute on `authUrl`. */
export interface CertificateTypeDescription {
  key: string;
  typeId: string;
  slug: string;
  owner: CertificateOwner;
  schemaVersion: number;
  displayName: string;
  description: string;
  fields: string[];
  fieldFriendlyNames: Record<string, string>;
  documentationUrl: string;
  iconUrl: string;
}

export function describeCertificateType(entry: CertificateType, authUrl: string): CertificateTypeDescription {
  return {
    key: entry.key,
    typeId: certificateTypeId(entry),
    slug: entry.slug,
    owner: entry.owner,
    schemaVersion: entry.schemaVersion,
    displayName: entry.displayName,
    description: entry.description,
    fields: Object.keys(entry.fields),
    fieldFriendlyNames: { ...entry.fields },
    documentationUrl: authUrl + certificatePagePath(entry),
    iconUrl: authUrl + certificateIconPath(entry),
  };
}

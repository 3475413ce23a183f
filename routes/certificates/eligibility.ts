import type { Kysely } from "kysely";
import { listLinkedAccounts } from "../../plugins/accounts/store.js";
import { findBinding } from "../../plugins/certificates/binding-store.js";
import { CERTIFICATE_CATALOG } from "../../plugins/certificates/catalog.js";
import { listMemberships } from "../../plugins/core-store/organizations.js";
import { listVerifications, statusOf } from "../../plugins/domain-verification/store.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * Which catalog certificates an identity's owner could get, and why not, for every type of the
 * catalog (plugins/certificates/catalog.ts): a first answer from what the account already proves
 * (a verified e-mail, linked provider accounts, a verified wallet binding, organizations, verified
 * domains). `issuable` says whether this server issues the type now; when it does not, the
 * reason says so too.
 */
export interface Eligibility {
  key: string;
  eligible: boolean;
  /** Whether this server issues the type (its type ID is configured and issuance is on). */
  issuable: boolean;
  reason: string;
}

type Check = [eligible: boolean, reason: string];

const PROVIDERS: Readonly<Record<string, [providerId: string, name: string]>> = {
  githubCert: ["github", "GitHub"],
  googleCert: ["google", "Google"],
  xCert: ["twitter", "X"],
  discordCert: ["discord", "Discord"],
  appleCert: ["apple", "Apple"],
};

/** What the account proves, read once for all the types. */
async function evidence(db: Kysely<Database>, user: { id: string; emailVerified: boolean }, bapId: string) {
  const [binding, accounts, memberships, verifications] = await Promise.all([findBinding(db, bapId), listLinkedAccounts(db, user.id), listMemberships(db, user.id), listVerifications(db, user.id, bapId)]);
  const now = new Date();
  const verified = verifications.filter((record) => statusOf(record, now) === "verified");
  return { user, binding, providers: new Set(accounts.map((a) => a.providerId)), memberships, verified };
}

function check(key: string, e: Awaited<ReturnType<typeof evidence>>): Check {
  const provider = PROVIDERS[key];
  if (provider) {
    const [id, name] = provider;
    return e.providers.has(id) ? [true, `A ${name} account is linked.`] : [false, `Link a ${name} account first.`];
  }
  switch (key) {
    case "bapWalletBinding":
      return e.binding?.verifiedAt ? [true, "This identity is bound to a wallet key."] : [false, "Bind a wallet key first (POST /api/certificates/wallet-binding/challenge, then /verify)."];
    case "emailCert":
      return e.user.emailVerified ? [true, "Your account e-mail is verified."] : [false, "Verify your account e-mail first."];
    case "phoneCert":
      return [false, "This service does not verify phone numbers."];
    case "providerAssurance":
      return e.providers.size ? [true, "A provider account is linked."] : [false, "Link a provider account first."];
    case "organizationMembership":
      return e.memberships.length ? [true, "You are a member of an organization."] : [false, "Join or create an organization first."];
    case "oauthAppOwnership":
      return e.verified.some((r) => r.oauthClientId) ? [true, "A verified domain of this identity names an OAuth client of yours."] : [false, "Verify a domain for one of your OAuth clients first."];
    case "verifiedDomain":
    case "handleCert":
      return e.verified.length ? [true, "This identity has a verified domain."] : [false, "Verify a domain for this identity first (POST /api/domain-verifications)."];
    default:
      return [false, "This service has no way yet to tell whether you could hold it."];
  }
}

export async function eligibilityOf(db: Kysely<Database>, user: { id: string; emailVerified: boolean }, bapId: string, issuable: ReadonlySet<string>, issuanceEnabled: boolean): Promise<Eligibility[]> {
  const e = await evidence(db, user, bapId);
  return CERTIFICATE_CATALOG.map(({ key }) => {
    const [eligible, reason] = check(key, e);
    const canIssue = issuable.has(key);
    const why = canIssue ? "" : issuanceEnabled ? ` This server does not issue ${key} certificates yet.` : " This server does not issue certificates now (issuance is off).";
    return { key, eligible, issuable: canIssue, reason: reason + why };
  });
}

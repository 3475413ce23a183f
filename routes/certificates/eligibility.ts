import type { Kysely } from "kysely";
import { listLinkedAccounts } from "../../plugins/accounts/store.js";
import { findBinding } from "../../plugins/certificates/binding-store.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * Which catalog certificates an identity's owner could get, and why not: a modest first answer
 * from what the account already proves (a verified e-mail, linked provider accounts, a verified
 * wallet binding). Only `issuable` types can be issued by this server today.
 */
export interface Eligibility {
  key: string;
  eligible: boolean;
  /** Whether this server issues the type (its type ID is configured and issuance is on). */
  issuable: boolean;
  reason: string;
}

const PROVIDER_CERTS: ReadonlyArray<[key: string, providerId: string, name: string]> = [
  ["githubCert", "github", "GitHub"],
  ["googleCert", "google", "Google"],
  ["xCert", "twitter", "X"],
  ["discordCert", "discord", "Discord"],
  ["appleCert", "apple", "Apple"],
];

export async function eligibilityOf(db: Kysely<Database>, user: { id: string; emailVerified: boolean }, bapId: string, issuable: ReadonlySet<string>): Promise<Eligibility[]> {
  const binding = await findBinding(db, bapId);
  const providers = new Set((await listLinkedAccounts(db, user.id)).map((a) => a.providerId));
  const entry = (key: string, eligible: boolean, reason: string): Eligibility => ({ key, eligible, issuable: issuable.has(key), reason });
  return [
    entry("bapWalletBinding", Boolean(binding?.verifiedAt), binding?.verifiedAt ? "This identity is bound to a wallet key." : "Bind a wallet key first (POST /api/certificates/wallet-binding/challenge, then /verify)."),
    entry("emailCert", user.emailVerified, user.emailVerified ? "Your account e-mail is verified." : "Verify your account e-mail first."),
    ...PROVIDER_CERTS.map(([key, providerId, name]) =>
      entry(key, providers.has(providerId), providers.has(providerId) ? `A ${name} account is linked.` : `Link a ${name} account first.`),
    ),
  ];
}

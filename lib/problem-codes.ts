/**
 * Every `code` member our RFC 9457 problem details carry (RFC 9457 §3.2 extension member),
 * with the status it is answered with and its usual detail. A route names an entry
 * (`problem(PROBLEM_CODES.BAP_ID_TAKEN)`), never a string: a code that is not here cannot
 * be sent (tests/meta/error-catalog.test.ts checks the sources too).
 *
 * Shaped like better-auth's `defineErrorCodes`: each entry knows its own `code`.
 */
function defineProblemCodes<const T extends Record<string, { status: number; detail: string }>>(codes: T): { [K in keyof T & string]: T[K] & { readonly code: K } } {
  return Object.fromEntries(Object.entries(codes).map(([code, entry]) => [code, { ...entry, code }])) as never;
}

export const PROBLEM_CODES = defineProblemCodes({
  /** The Bitcoin-Auth token is missing, malformed, stale, replayed or signed for another request. */
  INVALID_AUTH_TOKEN: { status: 401, detail: "The Bitcoin-Auth token is missing, malformed, stale, already used or not signed for this request." },
  /** RFC 6750 §3.1: the access token lacks the scope the resource needs (lower case, as RFC 6750 spells it). */
  insufficient_scope: { status: 403, detail: "This access token was not granted the scope this resource needs." },
  /** The request is signed by a key that is not the identity's member key. */
  NOT_MEMBER_KEY: { status: 403, detail: "The signing key is not this identity's member key." },
  /** The route is for administrators (better-auth admin plugin: `user.role` is "admin"). */
  ADMIN_REQUIRED: { status: 403, detail: "This is for administrators only." },
  /** The named identity is not the caller's. */
  IDENTITY_NOT_OWNED: { status: 403, detail: "That BAP identity is not yours." },
  /** link-oauth: the caller has no such linked provider account (better-auth `account` row). */
  ACCOUNT_NOT_LINKED: { status: 403, detail: "That provider account is not linked to your account." },
  /** No backup is stored for the identity (spec, Errors 6 and 7). */
  BACKUP_NOT_FOUND: { status: 404, detail: "No backup is stored for this identity." },
  /** The account has no BAP identity to store a backup for. */
  NO_BAP_IDENTITY: { status: 404, detail: "This account has no BAP identity to hold a backup." },
  /** sync: no registered profile or account matches the identity. */
  PROFILE_NOT_FOUND: { status: 404, detail: "No registered profile or account matches this identity." },
  /** The BAP identity is registered to another account. */
  BAP_ID_TAKEN: { status: 409, detail: "This BAP identity is registered to another account." },
  /** The transaction id is already recorded for a publication. */
  TXID_ALREADY_RECORDED: { status: 409, detail: "That transaction is already recorded." },
  /** The change would leave the account without a way to sign in (the social plugin says the same in its own family). */
  LAST_SIGN_IN_METHOD: { status: 409, detail: "This is your last way to sign in. Add a password, a passkey, a BAP identity or another account first." },
  /** link-oauth: that provider account already recovers another identity. */
  OAUTH_ALREADY_LINKED: { status: 409, detail: "That provider account already recovers another identity." },
  /** The thing is not in a state the action applies to (an agent already revoked, a host not paused). */
  INVALID_STATE: { status: 409, detail: "That no longer applies: it changed meanwhile." },
  /** A person's tier allows no more OAuth clients (plugins/subscriptions/client-limit.ts counts them). */
  CLIENT_LIMIT_REACHED: { status: 403, detail: "Your tier's limit of OAuth clients is reached: delete one or upgrade your subscription." },
  /** A unique constraint clashed (lib/errors.ts UniqueViolation). */
  ALREADY_EXISTS: { status: 409, detail: "This already exists (unique constraint): it may have been created just now by another request." },
  /** The encrypted backup is over the configured size limit. */
  BACKUP_TOO_LARGE: { status: 413, detail: "encryptedBackup is over the size limit." },
  /** checkout: Stripe is not configured on this server (STRIPE_SECRET_KEY). */
  PAYMENTS_NOT_CONFIGURED: { status: 503, detail: "Payments are not configured on this server." },
  /** checkout: no Stripe price is configured for that tier and interval (spec, Errors 8: 400). */
  PRICE_NOT_CONFIGURED: { status: 400, detail: "No price is configured for that tier and interval." },
  /** billing portal: the person has never paid through Stripe here, so there is no billing to manage. */
  NO_BILLING_ACCOUNT: { status: 404, detail: "There is no billing account for you here: you have not subscribed to a paid tier." },
  /** webhook: STRIPE_WEBHOOK_SECRET is not set, so no event can be verified. */
  WEBHOOK_NOT_CONFIGURED: { status: 503, detail: "The payment webhook is not configured on this server." },
  /** webhook: the Stripe-Signature header is missing, wrong or too old. */
  INVALID_SIGNATURE: { status: 400, detail: "The Stripe-Signature does not match this body, or its timestamp is too old." },
  /** subscription status: the NFT-ownership check failed and nothing verified earlier is at hand. */
  OWNERSHIP_UNAVAILABLE: { status: 503, detail: "NFT ownership could not be checked just now; try again shortly." },
  /** A dependency (the database, Redis) did not answer this request; it failed at once (lib/errors.ts ServiceUnavailable). */
  TEMPORARILY_UNAVAILABLE: { status: 503, detail: "The service cannot reach its storage just now; try again shortly." },
  /** /readyz: a dependency (database, Redis) does not answer, or the schema is not current. */
  NOT_READY: { status: 503, detail: "The service is not ready to serve requests." },
  /** wallet: no wallet with that address is connected to that identity. */
  WALLET_NOT_CONNECTED: { status: 404, detail: "No wallet with that address is connected to that identity." },
  /** wallet: the EVM challenge signature was refused (wrong key, tampered, used or expired challenge). */
  INVALID_EVM_SIGNATURE: { status: 401, detail: "The EVM signature was refused; ask for a new challenge (POST /api/wallet/connect/challenge) and sign it." },
  /** The identity is suspended until its owner confirms it (plugins/bap-identity/mailbox-proof.ts). */
  IDENTITY_SUSPENDED: { status: 403, detail: "Confirm this identity on your account page first." },
  /** wallet: the wallet is connected to that identity on another account. */
  WALLET_TAKEN: { status: 409, detail: "This wallet is connected to that identity on another account." },
  /** wallet: set-payment on a wallet whose provider cannot receive payments (only yours and 1sat). */
  PAYMENT_PROVIDER_NOT_SUPPORTED: { status: 400, detail: "Only yours and 1sat wallets can receive payments." },
  /** domain verification: the named OAuth client is not one the caller owns (registered while signed in). */
  OAUTH_CLIENT_NOT_OWNED: { status: 403, detail: "That OAuth client is not yours: register it while signed in to tie a domain to it." },
  /** domain verification: no such record among the caller's. */
  DOMAIN_VERIFICATION_NOT_FOUND: { status: 404, detail: "You have no domain verification with that id." },
  /** domain verification: the person holds DOMAIN_VERIFICATION_MAX_PENDING verifications not yet verified whose challenges still run. */
  DOMAIN_VERIFICATION_PENDING_LIMIT: { status: 409, detail: "You hold as many pending domain verifications as you may: verify one, or wait until a challenge expires." },
  /** domain verification: the challenge ran out before it was met; start a new one. */
  DOMAIN_CHALLENGE_EXPIRED: { status: 409, detail: "This challenge has expired; create a new domain verification." },
  /** domain verification: the record or file was not found, or did not hold the token (the detail says which). */
  DOMAIN_NOT_VERIFIED: { status: 422, detail: "The domain does not publish this challenge yet." },
  /** A route that needs BRC-103 mutual authentication was called without its x-bsv-auth-* headers. */
  MUTUAL_AUTH_REQUIRED: { status: 401, detail: "This route needs BRC-103 mutual authentication: shake hands at POST /.well-known/auth, then sign the request (AuthFetch does both)." },
  /** The BRC-103 message was refused: unknown session, not our nonce, a wrong key or signature. */
  MUTUAL_AUTH_FAILED: { status: 401, detail: "Mutual authentication failed: the session is unknown or the signature does not match; shake hands again." },
  /** signCertificate while CERTIFICATE_ISSUANCE_ENABLED is off (the default). */
  CERTIFICATE_ISSUANCE_DISABLED: { status: 503, detail: "Certificate issuance is disabled on this server." },
  /** signCertificate: the revocation chain could not fund the certificate's revocation outpoint now. */
  REVOCATION_FUNDING_UNAVAILABLE: { status: 503, detail: "A revocation outpoint could not be funded now; try again later." },
  /** signCertificate: the certificate type is not one this server issues. */
  CERTIFICATE_TYPE_NOT_ISSUED: { status: 400, detail: "This server does not issue certificates of that type." },
  /** signCertificate: the clientNonce was not made by the caller for this server (BRC-52). */
  INVALID_CLIENT_NONCE: { status: 400, detail: "clientNonce is not a nonce the caller made for this certifier." },
  /** signCertificate: the fields could not be decrypted or are not what the server can attest. */
  CERTIFICATE_FIELDS_REFUSED: { status: 403, detail: "The certificate fields cannot be attested for you." },
  /** No certificate with that serial number was issued here. */
  CERTIFICATE_NOT_FOUND: { status: 404, detail: "No certificate with that serial number was issued here." },
  /** revoke: only the certificate's subject may revoke it. */
  NOT_CERTIFICATE_SUBJECT: { status: 403, detail: "Only the certificate's subject may revoke it." },
  /** wallet binding: no verified binding for that identity or key. */
  WALLET_BINDING_NOT_FOUND: { status: 404, detail: "No verified wallet binding matches." },
  /** wallet binding: the signature over the challenge was refused (wrong key, tampered, used or expired challenge). */
  INVALID_WALLET_SIGNATURE: { status: 401, detail: "The wallet's signature was refused; ask for a new challenge and sign it." },
});

export type ProblemCode = keyof typeof PROBLEM_CODES;
export type ProblemEntry = (typeof PROBLEM_CODES)[ProblemCode];

/** `code` members of the backup routes' problem details (spec, Errors 6 and 7). */
export const BACKUP_ERROR_CODES = {
  /** link-oauth: the caller has no such linked provider account (better-auth `account` row). */
  ACCOUNT_NOT_LINKED: "ACCOUNT_NOT_LINKED",
  /** link-oauth: that provider account already recovers another identity. */
  OAUTH_ALREADY_LINKED: "OAUTH_ALREADY_LINKED",
  /** No backup is stored for the identity. */
  BACKUP_NOT_FOUND: "BACKUP_NOT_FOUND",
  /** The account has no BAP identity to store a backup for. */
  NO_BAP_IDENTITY: "NO_BAP_IDENTITY",
  /** The named identity is not the caller's. */
  IDENTITY_NOT_OWNED: "IDENTITY_NOT_OWNED",
  /** sync: no registered profile or account matches the identity. */
  PROFILE_NOT_FOUND: "PROFILE_NOT_FOUND",
  /** The Bitcoin-Auth token is missing, malformed, stale, replayed or signed for another request. */
  INVALID_AUTH_TOKEN: "INVALID_AUTH_TOKEN",
} as const;

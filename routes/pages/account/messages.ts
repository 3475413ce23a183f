import type { Auth } from "../../../auth.config.js";
import { SOCIAL_ERROR_CODES } from "../../../plugins/social/error-codes.js";
import type { SectionId } from "./pages.js";

/**
 * The account pages' one-line results. Every change is a form post answered with a redirect
 * (post/redirect/get) to its section's page with ?notice=<key> or ?error=<CODE>; only keys and
 * codes known here are shown, so nothing a link carries is ever echoed onto the page. Each
 * notice sits under the section whose form gives it, so an old `/account?notice=` link (an
 * e-mail sent before the account area had pages) still finds its page.
 */
const NOTICES_BY_SECTION = {
  profile: {
    "name-changed": "Your name was changed.",
    "email-changed": "Your e-mail address was changed.",
    "email-verification-sent": "We sent a link to the new address. The change takes effect once you follow it; your current address was told about the change.",
  },
  sessions: {
    "session-revoked": "That session was signed out.",
    "other-sessions-revoked": "Every other session was signed out.",
  },
  accounts: {
    "account-linked": "The account was linked.",
    "account-unlinked": "The account was unlinked.",
  },
  passkeys: {
    "passkey-added": "Your passkey was added.",
    "passkey-renamed": "The passkey was renamed.",
    "passkey-deleted": "The passkey was deleted.",
  },
  "two-factor": {
    "two-factor-enabled": "Two-factor sign-in is on.",
    "two-factor-disabled": "Two-factor sign-in is off.",
  },
  identities: {
    "primary-identity-set": "Your primary identity was changed.",
    "identity-confirmed": "The identity was confirmed. It can sign in again.",
    "identity-removed": "The identity was removed from your account.",
  },
  wallets: {
    "wallet-primary-set": "That wallet is now the primary one for its identity.",
    "wallet-payment-set": "That wallet now receives payments for its identity.",
    "wallet-disconnected": "The wallet was disconnected. The wallet itself and what it holds are unchanged.",
    "wallet-connected": "Your wallet is connected.",
  },
  apps: {
    "app-revoked": "The application's access was revoked.",
    "delegation-revoked": "The agent no longer acts for you through that app.",
  },
  agents: {
    "agent-host-paused": "The agent host was paused. Its agents cannot act until you resume it.",
    "agent-host-resumed": "The agent host was resumed.",
    "agent-host-revoked": "The agent host and every agent on it were revoked.",
    "agent-paused": "The agent was paused. It cannot act until you resume it.",
    "agent-resumed": "The agent was resumed.",
    "agent-revoked": "The agent was revoked.",
    "agent-grant-revoked": "The agent's permission was revoked.",
  },
  organizations: {
    "organization-created": "The organization was created.",
    "invitation-sent": "The invitation was sent.",
    "invitation-canceled": "The invitation was canceled.",
    "invitation-accepted": "You joined the organization.",
    "invitation-declined": "The invitation was declined.",
    "role-changed": "The member's role was changed.",
    "organization-left": "You left the organization.",
  },
} as const satisfies Partial<Record<SectionId, Record<string, string>>>;
type BySection = typeof NOTICES_BY_SECTION;
export type NoticeKey = { [S in keyof BySection]: keyof BySection[S] }[keyof BySection];

export const NOTICES: Readonly<Record<NoticeKey, string>> = Object.assign({}, ...Object.values(NOTICES_BY_SECTION));
const SECTION_OF_NOTICE = new Map<string, SectionId>(Object.entries(NOTICES_BY_SECTION).flatMap(([section, notices]) => Object.keys(notices).map((key) => [key, section as SectionId] as const)));

/** The section a notice belongs to, or null for an unknown key. */
export function sectionOfNotice(key: string | null | undefined): SectionId | null {
  return (key && SECTION_OF_NOTICE.get(key)) || null;
}

/** Our own words for the codes a person meets most; anything else falls back to better-auth's message. */
const OUR_WORDS: Record<string, string> = {
  INVALID_PASSWORD: "That password is not right.",
  REAUTHENTICATION_REQUIRED: "Type your password to change your e-mail address (without a password: sign out, sign in again, then change it).",
  SESSION_NOT_FRESH: "For your security, sign out and sign in again before making this change.",
  LAST_SIGN_IN_METHOD: SOCIAL_ERROR_CODES.LAST_SIGN_IN_METHOD.message,
  INVALID_CODE: "That code is not right. Check your authenticator app and try again.",
  RATE_LIMITED: "Too many attempts. Wait a minute and try again.",
  NOT_FOUND: "That item no longer exists.",
  SESSION_NOT_FOUND: "That session has already ended.",
  INVALID_INPUT: "Some of what you typed was not accepted. Check it and try again.",
  FAILED: "That did not work. Try again.",
  LINK_FAILED: "Linking that account did not finish. Try again.",
  ORGANIZATION_ALREADY_EXISTS: "That short name is taken. Choose another.",
  INVALID_STATE: "That no longer applies: it changed meanwhile. This is how it stands now.",
  WALLET_NOT_CONNECTED: "That wallet is not connected to your account.",
  PAYMENT_PROVIDER_NOT_SUPPORTED: "Only Yours and 1Sat wallets can receive payments.",
  PAYMENTS_NOT_CONFIGURED: "This server does not take payments.",
  PRICE_NOT_CONFIGURED: "That plan cannot be bought for that period here.",
  CHECKOUT_FAILED: "The payment page could not be opened. Try again in a minute.",
  NO_BILLING_ACCOUNT: "You have no billing to manage here: you have not subscribed to a paid plan.",
  PORTAL_FAILED: "The billing page could not be opened. Try again in a minute.",
};

/** The words for an error code: ours, better-auth's (any plugin's catalog), or a generic line. */
export function errorWords(auth: Auth, code: string | null | undefined): string | null {
  if (!code || !/^[A-Z0-9_]{1,100}$/.test(code)) return null;
  if (OUR_WORDS[code]) return OUR_WORDS[code];
  const known = (auth.$ERROR_CODES as Record<string, { message?: string } | undefined>)[code];
  // better-auth's own messages end without a full stop; our plugins' (their $ERROR_CODES) with one.
  return known?.message ? (known.message.endsWith(".") ? known.message : `${known.message}.`) : OUR_WORDS.FAILED!;
}

/**
 * Where Stripe Checkout sends the person back (plugins/subscriptions/checkout.ts): the payment
 * itself is recorded by the webhook, so "success" says what happens next, not that the plan changed.
 */
const SUBSCRIPTION_OUTCOMES: Record<string, string> = {
  success: "Thank you, your payment went through. Your plan NFT is being sent to your primary wallet; your plan changes once it arrives.",
  cancelled: "The checkout was cancelled. You were not charged.",
};

export function subscriptionWords(outcome: string | null | undefined): string | null {
  return outcome && Object.hasOwn(SUBSCRIPTION_OUTCOMES, outcome) ? SUBSCRIPTION_OUTCOMES[outcome]! : null;
}

export function noticeWords(key: string | null | undefined): string | null {
  return key && Object.hasOwn(NOTICES, key) ? NOTICES[key as NoticeKey] : null;
}

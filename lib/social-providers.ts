import type { BetterAuthOptions } from "better-auth";
import type { GenericOAuthConfig } from "better-auth/plugins";
import { BUILT_IN_PROVIDERS, type BuiltInProviderId, type SocialSettings } from "./social-env.js";

/** A provider as the sign-in page shows it. */
export interface SignInProvider {
  readonly id: string;
  readonly name: string;
}

/** Apple answers with a cross-site form POST to /callback/apple; better-auth checks its Origin. */
const APPLE_ORIGIN = "https://appleid.apple.com";

/** better-auth `socialProviders` for the built-in providers whose id and secret are both set. */
export function builtInSocialProviders(social: SocialSettings): NonNullable<BetterAuthOptions["socialProviders"]> {
  const { google, github, twitter, discord, apple } = social.builtIn;
  return {
    ...(google ? { google: { ...google } } : {}),
    ...(github ? { github: { ...github } } : {}),
    ...(twitter ? { twitter: { ...twitter } } : {}),
    ...(discord ? { discord: { ...discord } } : {}),
    ...(apple ? { apple: { ...apple, ...(social.appleAppBundleIdentifier ? { appBundleIdentifier: social.appleAppBundleIdentifier } : {}) } } : {}),
  };
}

/** Origins that post back to us and must pass better-auth's origin check. */
export function socialTrustedOrigins(social: SocialSettings): string[] {
  return social.builtIn.apple ? [APPLE_ORIGIN] : [];
}

/**
 * genericOAuth entries: one OIDC provider per issuer, discovered from its well-known document
 * (OIDC Discovery §4). They plug into the same /sign-in/social and /callback/<id> routes as the
 * built-ins. PKCE S256 (RFC 7636) and a per-request nonce (OIDC Core §3.1.2.1) are sent; ID
 * tokens are verified against the discovered JWKS, issuer and our client id, and a provider
 * whose discovery offers no JWKS is skipped rather than trusted unverified.
 */
export function oidcProviders(social: SocialSettings): GenericOAuthConfig[] {
  return social.oidc.map((p) => ({
    providerId: p.id,
    name: p.name,
    discoveryUrl: `${p.issuer}/.well-known/openid-configuration`,
    clientId: p.clientId,
    clientSecret: p.clientSecret,
    scopes: [...p.scopes],
    tokenEndpointAuth: { method: p.tokenAuthMethod },
    pkce: true,
    requireIdTokenVerification: true,
  }));
}

/** Every configured provider, built-ins first in their usual order, then OIDC providers as numbered. */
export function signInProviders(social: SocialSettings): SignInProvider[] {
  const builtIn = (Object.keys(BUILT_IN_PROVIDERS) as BuiltInProviderId[])
    .filter((id) => social.builtIn[id])
    .map((id) => ({ id, name: BUILT_IN_PROVIDERS[id].name }));
  return [...builtIn, ...social.oidc.map(({ id, name }) => ({ id, name }))];
}

import type { SignInProvider } from "../../lib/social-providers.js";

/**
 * "Continue with <Name>": one small form per configured provider, posting to our page route
 * POST /sign-in/social, which asks better-auth for the provider's authorization URL and
 * redirects there. No JavaScript. The signed `oauth_query` rides along so a pending OAuth
 * authorization resumes once the provider sends the person back to /api/auth/callback/<id>.
 */
export function SocialSignIn(props: { providers?: readonly SignInProvider[]; oauthQuery?: string }) {
  if (!props.providers?.length) return null;
  return (
    <section class="social-sign-in" aria-label="Sign in with another account">
      {props.providers.map((p) => (
        <form method="post" action="/sign-in/social">
          <input type="hidden" name="provider" value={p.id} />
          {props.oauthQuery ? <input type="hidden" name="oauth_query" value={props.oauthQuery} /> : null}
          <button type="submit" class="secondary">
            Continue with {p.name}
          </button>
        </form>
      ))}
    </section>
  );
}

/**
 * What to tell a person sent back to /sign-in with `?error=<code>` by a failed provider round
 * trip (better-auth's callback error codes). Known codes get words; anything else a generic line,
 * so nothing from the query is echoed onto the page.
 */
export function socialErrorMessage(code: string | null | undefined): string | null {
  if (!code) return null;
  switch (code) {
    case "access_denied":
      return "Sign-in was cancelled at the provider.";
    case "state_mismatch":
    case "state_not_found":
    case "state_invalid":
      return "That sign-in link has expired or was opened in another browser. Try again.";
    case "account_not_linked":
      return "An account with that e-mail already exists. Sign in to it another way, then link this provider from your account.";
    case "email_not_found":
      return "The provider did not share an e-mail address, which this service needs.";
    case "signup_disabled":
      return "There is no account for that sign-in yet.";
    default:
      return "Signing in with that provider failed. Try again.";
  }
}

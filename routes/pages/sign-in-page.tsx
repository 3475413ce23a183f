import { KeySignInSection, type KeySignInOptions } from "./key-sign-in-page.js";
import { ErrorNote, Layout } from "./layout.js";
import { PasskeyScript, PasskeySignInSection, type PasskeySignInOptions } from "./passkey-sign-in-page.js";
import { SocialSignIn } from "./social-sign-in-page.js";
import type { SignInProvider } from "../../lib/social-providers.js";

export function SignInPage(props: { oauthQuery?: string; error?: string | null; email?: string; signUpHref: string; forgotHref?: string; keySignIn?: KeySignInOptions | null; socialProviders?: readonly SignInProvider[]; passkey?: PasskeySignInOptions | null; returnTo?: string | null }) {
  return (
    <Layout title="Sign in">
      <h1>Sign in</h1>
      <ErrorNote message={props.error} />
      <form method="post" action="/sign-in">
        {props.oauthQuery ? <input type="hidden" name="oauth_query" value={props.oauthQuery} /> : null}
        {props.returnTo ? <input type="hidden" name="return_to" value={props.returnTo} /> : null}
        <label for="email">E-mail</label>
        <input id="email" name="email" type="email" autocomplete="username" required value={props.email ?? ""} />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit">Sign in</button>
      </form>
      {props.passkey ? <PasskeySignInSection {...props.passkey} oauthQuery={props.oauthQuery} /> : null}
      <SocialSignIn providers={props.socialProviders} oauthQuery={props.oauthQuery} />
      <p class="muted">
        No account? <a href={props.signUpHref}>Create one</a> · <a href={props.forgotHref ?? "/forgot-password"}>Forgot your password?</a>
      </p>
      {props.keySignIn ? <KeySignInSection {...props.keySignIn} oauthQuery={props.oauthQuery} /> : null}
      {props.passkey ? <PasskeyScript scriptSrc={props.passkey.scriptSrc} /> : null}
    </Layout>
  );
}

export function SignUpPage(props: { oauthQuery?: string; error?: string | null; email?: string; name?: string; signInHref: string }) {
  return (
    <Layout title="Create an account">
      <h1>Create an account</h1>
      <ErrorNote message={props.error} />
      <form method="post" action="/sign-up">
        {props.oauthQuery ? <input type="hidden" name="oauth_query" value={props.oauthQuery} /> : null}
        <label for="name">Name</label>
        <input id="name" name="name" type="text" autocomplete="name" required value={props.name ?? ""} />
        <label for="email">E-mail</label>
        <input id="email" name="email" type="email" autocomplete="email" required value={props.email ?? ""} />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="new-password" minlength={8} required />
        <button type="submit">Create account</button>
      </form>
      <p class="muted">
        Already have an account? <a href={props.signInHref}>Sign in</a>
      </p>
    </Layout>
  );
}

export function ForgotPasswordPage(props: { sent?: boolean; error?: string | null; oauthQuery?: string }) {
  return (
    <Layout title="Reset your password">
      <h1>Reset your password</h1>
      <ErrorNote message={props.error} />
      {props.sent ? (
        <p role="status">If that address has an account, a reset link is on its way.</p>
      ) : (
        <form method="post" action="/forgot-password">
          {props.oauthQuery ? <input type="hidden" name="oauth_query" value={props.oauthQuery} /> : null}
          <label for="email">E-mail</label>
          <input id="email" name="email" type="email" autocomplete="email" required />
          <button type="submit">Send reset link</button>
        </form>
      )}
    </Layout>
  );
}

export function ResetPasswordPage(props: { token: string; error?: string | null; done?: boolean }) {
  return (
    <Layout title="Choose a new password">
      <h1>Choose a new password</h1>
      <ErrorNote message={props.error} />
      {props.done ? (
        <p role="status">
          Your password was changed. <a href="/sign-in">Sign in</a>
        </p>
      ) : (
        <form method="post" action="/reset-password">
          <input type="hidden" name="token" value={props.token} />
          <label for="password">New password</label>
          <input id="password" name="password" type="password" autocomplete="new-password" minlength={8} required />
          <button type="submit">Change password</button>
        </form>
      )}
    </Layout>
  );
}

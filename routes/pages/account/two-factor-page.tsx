import { raw } from "hono/html";
import { renderSVG } from "uqr";
import { ErrorNote, Layout } from "../layout.js";
import { sectionHref } from "./pages.js";

/**
 * The pages between "Set up two-factor" and "Two-factor is on": scan or type the secret, prove
 * it with one code, then see the backup codes once. All plain forms; the QR code is an inline
 * SVG drawn on the server (no image request, no script).
 */

/** The otpauth URI's secret (RFC 4648 base32), grouped in fours for typing. */
function typedSecret(totpURI: string): string {
  const secret = new URL(totpURI).searchParams.get("secret") ?? "";
  return secret.replace(/(.{4})/g, "$1 ").trim();
}

function Qr(props: { data: string }) {
  // uqr draws rects and paths with fill attributes only: nothing the page's CSP would block.
  const svg = renderSVG(props.data, { border: 2 }).replace("<svg ", '<svg class="qr" role="img" aria-label="QR code of your authenticator secret" ');
  return <div>{raw(svg)}</div>;
}

export function TwoFactorSetupPage(props: { totpURI: string }) {
  return (
    <Layout title="Set up two-factor sign-in">
      <h1>Set up two-factor sign-in</h1>
      <p>Scan this code with an authenticator app (such as Aegis, Google Authenticator, 1Password or Authy).</p>
      <Qr data={props.totpURI} />
      <p class="muted">
        Can't scan it? Add an account by hand with this key: <code data-role="totp-secret">{typedSecret(props.totpURI)}</code>, time-based, 6 digits. On this device you can also{" "}
        <a href={props.totpURI}>open it in your authenticator app</a>.
      </p>
      <VerifyForm />
    </Layout>
  );
}

function VerifyForm() {
  return (
    <form method="post" action="/account/two-factor/verify">
      <label for="tf-verify-code">Code from the app</label>
      <input id="tf-verify-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,8}" maxlength={8} required />
      <button type="submit">Turn on two-factor</button>
    </form>
  );
}

/** A wrong code during setup: the secret is already in the app, so only the code is asked again. */
export function TwoFactorVerifyPage(props: { error: string }) {
  return (
    <Layout title="Set up two-factor sign-in">
      <h1>Set up two-factor sign-in</h1>
      <ErrorNote message={props.error} />
      <p class="muted">Codes change every 30 seconds: type the one your app shows now. If your app has no entry for this account, go back to your account and set up two-factor again.</p>
      <VerifyForm />
      <p>
        <a href={sectionHref("two-factor")}>Back to your account</a>
      </p>
    </Layout>
  );
}

/** Backup codes, shown this once: after two-factor is turned on, and after making new ones. */
export function BackupCodesPage(props: { codes: string[]; justEnabled: boolean }) {
  return (
    <Layout title="Your backup codes">
      <h1>{props.justEnabled ? "Two-factor sign-in is on" : "Your new backup codes"}</h1>
      <p>
        Keep these backup codes somewhere safe. Each one signs you in once if you lose your authenticator app. <strong>This is the only time they are shown.</strong>
      </p>
      <ul class="codes" aria-label="Backup codes">
        {props.codes.map((code) => (
          <li>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <p>
        <a href={sectionHref("two-factor")}>I have saved them: back to your account</a>
      </p>
    </Layout>
  );
}

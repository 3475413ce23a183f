import type { Logger } from "../../lib/logger.js";
import { passkeyScript } from "./assets.js";

/** What the sign-in page needs to offer "Sign in with a passkey" (client/passkeys.ts). */
export interface PasskeySignInOptions {
  /** URL of the bundled script, with its content hash. */
  scriptSrc: string;
  basePath: string;
}

/**
 * "Sign in with a passkey": a button that needs JavaScript (WebAuthn is a browser API), hidden
 * until the script shows it. The signed `oauth_query` rides along so a pending authorization
 * resumes after sign-in, as with key sign-in. The page adds <PasskeyScript> once, at its end.
 */
export function PasskeySignInSection(props: PasskeySignInOptions & { oauthQuery?: string }) {
  return (
    <section class="passkey-sign-in" aria-label="Sign in with a passkey">
      <form
        id="passkey-sign-in"
        hidden
        data-options-path={`${props.basePath}/passkey/generate-authenticate-options`}
        data-verify-path={`${props.basePath}/passkey/verify-authentication`}
        data-continue-path={`${props.basePath}/oauth2/continue`}
        data-authorize-path={`${props.basePath}/oauth2/authorize`}
        data-oauth-query={props.oauthQuery ?? ""}
        data-done="/"
      >
        <button type="submit" class="secondary">
          Sign in with a passkey
        </button>
        <p data-role="error" class="error" role="alert" hidden></p>
        <p data-role="status" class="muted" role="status"></p>
      </form>
    </section>
  );
}

/** The passkey script; module scripts run once the page is parsed, so it can sit at the end. */
export function PasskeyScript(props: { scriptSrc: string }) {
  return <script type="module" src={props.scriptSrc}></script>;
}

/** The section's settings, or null when the script cannot be built (the page then goes without it). */
export async function passkeySignInOptions(basePath: string, logger?: Logger): Promise<PasskeySignInOptions | null> {
  const script = await passkeyScript().catch((err: unknown) => {
    logger?.error("passkey script build failed", { err });
    return null;
  });
  return script ? { scriptSrc: script.path, basePath } : null;
}

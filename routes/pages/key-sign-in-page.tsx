import type { Auth } from "../../auth.config.js";
import type { Logger } from "../../lib/logger.js";
import { keySignInScript } from "./assets.js";
import { TWO_FACTOR_PATH } from "./two-factor-sign-in.js";

/** What the sign-in page needs to offer key sign-in (see client/key-sign-in.ts). */
export interface KeySignInOptions {
  /** URL of the bundled script, with its content hash. */
  scriptSrc: string;
  /** POST route of key sign-in, as the token must name it: /api/auth/sign-in/<service>. */
  signInPath: string;
  continuePath: string;
  authorizePath: string;
  /** The second-factor page, for an account with two-factor on (routes/pages/two-factor-sign-in.tsx). */
  twoFactorPath: string;
  /** GET route of the signed-in account's stored backup; offered only with a session. */
  backupPath: string;
  /** The person already has a session, so their cloud copy can be fetched. */
  cloudBackup: boolean;
}

/**
 * "Sign in with your identity": the person's encrypted backup (a file, or their cloud copy),
 * opened in the browser with their password. Without JavaScript the form stays hidden and the
 * <noscript> note explains why; the e-mail form above still works. Secret fields carry no `name`, so
 * the form can never be submitted as a plain form.
 */
export function KeySignInSection(props: KeySignInOptions & { oauthQuery?: string }) {
  return (
    <section class="key-sign-in" aria-labelledby="key-sign-in-title">
      <h2 id="key-sign-in-title">Sign in with your identity</h2>
      <p class="muted">Your backup is opened on this device with its password. Only a signature made with your identity key is sent.</p>
      <noscript>
        <p class="muted">Signing in with your identity needs JavaScript: your backup is decrypted in your browser, never on our server. Turn JavaScript on, or sign in with your e-mail above.</p>
      </noscript>
      <form
        id="key-sign-in"
        hidden
        data-sign-in-path={props.signInPath}
        data-continue-path={props.continuePath}
        data-authorize-path={props.authorizePath}
        data-two-factor-path={props.twoFactorPath}
        data-backup-path={props.backupPath}
        data-oauth-query={props.oauthQuery ?? ""}
        data-done="/"
      >
        {props.cloudBackup ? (
          <fieldset>
            <legend>Which backup?</legend>
            <label class="choice">
              <input type="radio" name="backup-source" value="file" checked /> A backup file on this device
            </label>
            <label class="choice">
              <input type="radio" name="backup-source" value="cloud" /> My cloud backup (still encrypted; opened here)
            </label>
          </fieldset>
        ) : null}
        <div id="backup-file-field">
          <label for="backup-file">Backup file</label>
          <input id="backup-file" type="file" />
        </div>
        <div id="identity-choice-field" hidden>
          <label for="identity-choice">Identity</label>
          <select id="identity-choice"></select>
        </div>
        <label for="backup-password">Backup password</label>
        <input id="backup-password" type="password" autocomplete="off" />
        <button type="submit">Sign in with your identity</button>
        <p id="key-sign-in-error" class="error" role="alert" hidden></p>
        <p id="key-sign-in-status" class="muted" role="status"></p>
      </form>
      <script type="module" src={props.scriptSrc}></script>
    </section>
  );
}

export interface KeySignInDeps {
  auth: Auth;
  /** better-auth's mount, e.g. /api/auth. */
  basePath: string;
  /** Key sign-in's route name (SIGMA_SERVICE_NAME). @default "sigma" */
  serviceName?: string;
  logger?: Logger;
}

/**
 * The key sign-in section's settings for one request, or null when the script cannot be built:
 * then the page shows the e-mail form alone rather than failing.
 */
export async function keySignInOptions(deps: KeySignInDeps, headers: Headers): Promise<KeySignInOptions | null> {
  const [script, session] = await Promise.all([
    keySignInScript().catch((err: unknown) => {
      deps.logger?.error("key sign-in script build failed", { err });
      return null;
    }),
    headers.has("cookie") ? deps.auth.api.getSession({ headers }).catch(() => null) : null,
  ]);
  if (!script) return null;
  return {
    scriptSrc: script.path,
    signInPath: `${deps.basePath}/sign-in/${deps.serviceName ?? "sigma"}`,
    continuePath: `${deps.basePath}/oauth2/continue`,
    authorizePath: `${deps.basePath}/oauth2/authorize`,
    twoFactorPath: TWO_FACTOR_PATH,
    backupPath: "/api/backup",
    cloudBackup: Boolean(session),
  };
}

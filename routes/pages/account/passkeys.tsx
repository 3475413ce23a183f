import type { SignInProvider } from "../../../lib/social-providers.js";
import { Section, When } from "./format.js";
import type { LinkedAccount, PasskeyRow } from "./queries.js";

/** Linked sign-in accounts: the password, and accounts at social providers (link and unlink). */
export function LinkedAccountsSection(props: { accounts: LinkedAccount[]; providers: readonly SignInProvider[] }) {
  const nameOf = (providerId: string) => props.providers.find((p) => p.id === providerId)?.name ?? providerId;
  const social = props.accounts.filter((a) => a.providerId !== "credential");
  const password = props.accounts.some((a) => a.providerId === "credential" && a.hasPassword);
  const linkable = props.providers.filter((p) => !social.some((a) => a.providerId === p.id));
  return (
    <Section id="accounts" title="Linked accounts">
      <p>{password ? "You can sign in with your e-mail and password." : "This account has no password."}</p>
      {social.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Provider</th>
              <th scope="col">Linked</th>
              <th scope="col">
                <span class="muted">Action</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {social.map((a) => (
              <tr>
                <td>{nameOf(a.providerId)}</td>
                <td>
                  <When at={a.createdAt} />
                </td>
                <td>
                  {/* plugins/social decides: an account that is the last way to sign in stays. */}
                  <form method="post" action="/account/accounts/unlink" class="inline">
                    <input type="hidden" name="account" value={a.id} />
                    <button type="submit" class="secondary" aria-label={`Unlink ${nameOf(a.providerId)}`}>
                      Unlink
                    </button>
                  </form>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="muted">No social account is linked.</p>
      )}
      {linkable.map((p) => (
        <form method="post" action="/account/accounts/link" class="inline">
          <input type="hidden" name="provider" value={p.id} />
          <button type="submit" class="secondary">
            Link {p.name}
          </button>
        </form>
      ))}
    </Section>
  );
}

export interface PasskeyControls {
  /** better-auth's mount, for the registration client's endpoints. */
  basePath: string;
  /** The bundled passkey script, or null when it could not be built. */
  scriptSrc: string | null;
}

export function PasskeysSection(props: { passkeys: PasskeyRow[] } & PasskeyControls) {
  return (
    <Section id="passkeys" title="Passkeys">
      {props.passkeys.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Passkey</th>
              <th scope="col">Added</th>
              <th scope="col">
                <span class="muted">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {props.passkeys.map((p) => {
              const label = p.name || "Unnamed passkey";
              return (
                <tr data-passkey-id={p.id}>
                  <td>
                    {label}
                    <span class="muted"> · {p.backedUp ? "synced" : "this device only"}</span>
                  </td>
                  <td>
                    <When at={p.createdAt} />
                  </td>
                  <td>
                    <form method="post" action="/account/passkeys/rename" class="inline">
                      <input type="hidden" name="id" value={p.id} />
                      <label for={`passkey-name-${p.id}`}>New name</label>
                      <input id={`passkey-name-${p.id}`} name="name" type="text" maxlength={100} required value={p.name ?? ""} />
                      <button type="submit" class="secondary" aria-label={`Rename ${label}`}>
                        Rename
                      </button>
                    </form>{" "}
                    <form method="post" action="/account/passkeys/delete" class="inline">
                      <input type="hidden" name="id" value={p.id} />
                      <button type="submit" class="secondary" aria-label={`Delete ${label}`}>
                        Delete
                      </button>
                    </form>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : (
        <p class="muted">You have no passkeys yet.</p>
      )}
      <form
        id="passkey-add"
        hidden
        data-options-path={`${props.basePath}/passkey/generate-register-options`}
        data-verify-path={`${props.basePath}/passkey/verify-registration`}
        data-done="/account?notice=passkey-added#passkeys"
      >
        <label for="passkey-add-name">Name for the new passkey</label>
        <input id="passkey-add-name" name="name" type="text" maxlength={100} placeholder="e.g. Work laptop" />
        <button type="submit">Add a passkey</button>
        <p data-role="error" class="error" role="alert" hidden></p>
        <p data-role="status" class="muted" role="status"></p>
      </form>
      <p class="muted" data-passkey-fallback>
        Adding a passkey needs JavaScript and a browser that supports passkeys.
      </p>
      {props.scriptSrc ? <script type="module" src={props.scriptSrc}></script> : null}
    </Section>
  );
}

/** `keySignInAsks`: key sign-in also stops at the code step (off with KEY_SIGN_IN_SKIPS_TWO_FACTOR). */
export function TwoFactorSection(props: { enabled: boolean; hasPassword: boolean; keySignInAsks: boolean }) {
  return (
    <Section id="two-factor" title="Two-factor sign-in">
      {!props.hasPassword ? (
        <p class="muted">Two-factor sign-in protects signing in with a password. This account has no password, so there is nothing to protect here.</p>
      ) : props.enabled ? (
        <>
          <p>
            <strong>On.</strong> Signing in with your password{props.keySignInAsks ? " or an identity key" : ""} also asks for a code from your authenticator app or a backup code.
          </p>
          <h3>New backup codes</h3>
          <form method="post" action="/account/two-factor/backup-codes">
            <label for="tf-codes-password">Password</label>
            <input id="tf-codes-password" name="password" type="password" autocomplete="current-password" required />
            <button type="submit" class="secondary">
              Make new backup codes
            </button>
            <p class="muted">Your old backup codes stop working.</p>
          </form>
          <h3>Turn off</h3>
          <form method="post" action="/account/two-factor/disable">
            <label for="tf-disable-password">Password</label>
            <input id="tf-disable-password" name="password" type="password" autocomplete="current-password" required />
            <button type="submit" class="secondary">
              Turn off two-factor
            </button>
          </form>
        </>
      ) : (
        <>
          <p>
            <strong>Off.</strong> Add a code from an authenticator app to password sign-in{props.keySignInAsks ? " and identity-key sign-in" : ""}.
          </p>
          <form method="post" action="/account/two-factor/enable">
            <label for="tf-enable-password">Password</label>
            <input id="tf-enable-password" name="password" type="password" autocomplete="current-password" required />
            <button type="submit">Set up two-factor</button>
          </form>
        </>
      )}
    </Section>
  );
}

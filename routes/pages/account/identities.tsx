import type { AuthorizedApp } from "../../authorized-apps.js";
import { SCOPE_WORDS } from "../consent.js";
import { Section, When } from "./format.js";
import type { BapIdentityRow } from "./queries.js";

/**
 * BAP identities registered to the account (routes/profile.ts); the primary one is what apps see
 * by default. A suspended one (attached before the owner proved the mailbox) asks to be
 * confirmed or removed; any identity can be removed unless it is the last way to sign in.
 */
export function IdentitiesSection(props: { identities: BapIdentityRow[] }) {
  const suspended = props.identities.filter((i) => i.suspended).length;
  return (
    <Section id="identities" title="BAP identities">
      {suspended ? (
        <p class="error" role="alert">
          {suspended === 1 ? "One identity was" : `${suspended} identities were`} added to this account before you proved that you own its e-mail address, so{" "}
          {suspended === 1 ? "it cannot" : "they cannot"} sign in. Confirm only an identity you added yourself; remove any you do not recognise.
        </p>
      ) : null}
      {props.identities.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Identity</th>
              <th scope="col">Address</th>
              <th scope="col">
                <span class="muted">Status and actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {props.identities.map((i) => {
              const label = i.name ?? i.bapId;
              return (
                <tr data-bap-id={i.bapId}>
                  <td>
                    {i.name ? <strong>{i.name} </strong> : null}
                    <code>{i.bapId}</code>
                  </td>
                  <td>
                    <code>{i.currentAddress ?? i.rootAddress}</code>
                  </td>
                  <td>
                    {i.suspended ? (
                      <>
                        <strong>Suspended</strong>{" "}
                        <form method="post" action="/account/identities/confirm" class="inline">
                          <input type="hidden" name="bap_id" value={i.bapId} />
                          <button type="submit" class="secondary" aria-label={`Confirm: ${label}`}>
                            Confirm
                          </button>
                        </form>
                      </>
                    ) : i.isPrimary ? (
                      <strong>Primary</strong>
                    ) : (
                      <form method="post" action="/account/identities/primary" class="inline">
                        <input type="hidden" name="bap_id" value={i.bapId} />
                        <button type="submit" class="secondary" aria-label={`Make primary: ${label}`}>
                          Make primary
                        </button>
                      </form>
                    )}{" "}
                    <form method="post" action="/account/identities/remove" class="inline">
                      <input type="hidden" name="bap_id" value={i.bapId} />
                      <button type="submit" class="secondary" aria-label={`Remove: ${label}`}>
                        Remove
                      </button>
                    </form>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : (
        <p class="muted">No BAP identity is registered to this account.</p>
      )}
    </Section>
  );
}

/** Apps the person has authorized (routes/authorized-apps.ts); revoking drops the consent and every token together. */
export function AppsSection(props: { apps: AuthorizedApp[] }) {
  return (
    <Section id="apps" title="Authorized apps">
      {props.apps.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">App</th>
              <th scope="col">It can</th>
              <th scope="col">Since</th>
              <th scope="col">
                <span class="muted">Action</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {props.apps.map((a) => (
              <tr data-client-id={a.clientId}>
                <td>
                  {a.name}
                  {a.uri ? <div class="muted">{a.uri}</div> : null}
                </td>
                <td>
                  <ul class="scopes">
                    {a.scopes.map((s) => (
                      <li>{SCOPE_WORDS[s] ?? s}</li>
                    ))}
                  </ul>
                </td>
                <td>
                  <When at={new Date(a.authorizedAt)} />
                </td>
                <td>
                  <form method="post" action="/account/apps/revoke" class="inline">
                    <input type="hidden" name="client_id" value={a.clientId} />
                    <button type="submit" class="secondary" aria-label={`Revoke ${a.name}`}>
                      Revoke
                    </button>
                  </form>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="muted">You have not authorized any app.</p>
      )}
    </Section>
  );
}

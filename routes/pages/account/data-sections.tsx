import type { AuthorizedApp } from "../../authorized-apps.js";
import { SCOPE_WORDS } from "../consent.js";
import { Section, When } from "./format.js";
import type { BapIdentityRow } from "./queries.js";

/** BAP identities registered to the account (routes/profile.ts); the primary one is what apps see by default. */
export function IdentitiesSection(props: { identities: BapIdentityRow[] }) {
  return (
    <Section id="identities" title="BAP identities">
      {props.identities.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Identity</th>
              <th scope="col">Address</th>
              <th scope="col">
                <span class="muted">Primary</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {props.identities.map((i) => (
              <tr data-bap-id={i.bapId}>
                <td>
                  {i.name ? <strong>{i.name} </strong> : null}
                  <code>{i.bapId}</code>
                </td>
                <td>
                  <code>{i.currentAddress ?? i.rootAddress}</code>
                </td>
                <td>
                  {i.isPrimary ? (
                    <strong>Primary</strong>
                  ) : (
                    <form method="post" action="/account/identities/primary" class="inline">
                      <input type="hidden" name="bap_id" value={i.bapId} />
                      <button type="submit" class="secondary" aria-label={`Make primary: ${i.name ?? i.bapId}`}>
                        Make primary
                      </button>
                    </form>
                  )}
                </td>
              </tr>
            ))}
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

import { Hono } from "hono";
import type { AuthorizedApp } from "../../../plugins/oauth-store/grants.js";
import { revokeAuthorizedApp } from "../../../plugins/oauth-store/grants.js";
import { ScopeList } from "../consent-page.js";
import { readForm } from "../form-replay.js";
import type { PageContext, PageEnv } from "../page-env.js";
import { AccountTable, PostButton } from "./account-table.js";
import { Section, When } from "./format.js";
import { accountForm, backWith } from "./outcome.js";

/** Apps the person has authorized (plugins/oauth-store/grants.ts); revoking drops the consent and every token together. */
export function AppsSection(props: { apps: AuthorizedApp[] }) {
  return (
    <Section id="apps" title="Authorized apps">
      {props.apps.length ? (
        <AccountTable columns={["App", "It can", "Since"]} actions="Action">
          {props.apps.map((a) => (
            <tr data-client-id={a.clientId}>
              <td>
                {a.name}
                {a.uri ? <div class="muted">{a.uri}</div> : null}
              </td>
              <td>
                <ScopeList scopes={a.scopes} />
              </td>
              <td>
                <When at={new Date(a.authorizedAt)} />
              </td>
              <td>
                <PostButton action="/account/apps/revoke" fields={{ client_id: a.clientId }} text="Revoke" label={`Revoke ${a.name}`} />
              </td>
            </tr>
          ))}
        </AccountTable>
      ) : (
        <p class="muted">You have not authorized any app.</p>
      )}
    </Section>
  );
}

async function revokeApp(c: PageContext) {
  const clientId = (await readForm(c)).client_id ?? "";
  const ok = clientId ? await revokeAuthorizedApp(c.var.page.db, c.var.session.user.id, clientId) : false;
  return backWith(ok, "app-revoked", "apps");
}

/** Mounted at /account. */
export const appRoutes = new Hono<PageEnv>().post("/apps/revoke", ...accountForm, revokeApp);

import { Hono } from "hono";
import type { AuthorizedApp } from "../../../plugins/oauth-store/grants.js";
import { revokeAuthorizedApp } from "../../../plugins/oauth-store/grants.js";
import { revokeAgentExchanges, type ActingAgent } from "../../../plugins/oauth-store/exchanges.js";
import { ScopeList } from "../consent-page.js";
import { readForm } from "../form-replay.js";
import type { PageContext, PageEnv } from "../page-env.js";
import { AccountTable, PostButton } from "./account-table.js";
import { Section, When } from "./format.js";
import { accountForm, backWith } from "./outcome.js";

/** An authorized app and the agents acting for the person through tokens exchanged from its grant (RFC 8693). */
export type AppView = AuthorizedApp & { agents: ActingAgent[] };

/** The agents acting through one app's grant, each with its own revoke button (its delegated tokens end). */
function ActingAgents(props: { app: AppView }) {
  if (!props.app.agents.length) return <span class="muted">None</span>;
  return (
    <ul>
      {props.app.agents.map((agent) => (
        <li data-agent-id={agent.clientId}>
          {agent.name}{" "}
          <PostButton action="/account/apps/agents/revoke" fields={{ client_id: props.app.clientId, agent_id: agent.clientId }} text="Revoke" label={`Revoke ${agent.name} acting through ${props.app.name}`} />
        </li>
      ))}
    </ul>
  );
}

/** Apps the person has authorized (plugins/oauth-store/grants.ts); revoking drops the consent and every token together. */
export function AppsSection(props: { apps: AppView[] }) {
  return (
    <Section id="apps" title="Authorized apps">
      {props.apps.length ? (
        <AccountTable columns={["App", "It can", "Since", "Agents acting for you"]} actions="Action">
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
                <ActingAgents app={a} />
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

/** Ends the delegated tokens one agent holds through one app's grant; the app keeps its access. */
async function revokeAgent(c: PageContext) {
  const form = await readForm(c);
  const [clientId, agentId] = [form.client_id ?? "", form.agent_id ?? ""];
  const ok = clientId && agentId ? await revokeAgentExchanges(c.var.page.db, c.var.session.user.id, clientId, agentId) : false;
  return backWith(ok, "delegation-revoked", "apps");
}

/** Mounted at /account. */
export const appRoutes = new Hono<PageEnv>().post("/apps/revoke", ...accountForm, revokeApp).post("/apps/agents/revoke", ...accountForm, revokeAgent);

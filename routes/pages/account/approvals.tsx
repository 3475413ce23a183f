import type { Kysely } from "kysely";
import type { Database } from "../../../lib/db/tables.js";
import { listPendingFor } from "../../../plugins/ciba/store.js";
import { findClientDisplay } from "../../../plugins/oauth-store/clients.js";
import { AccountTable } from "./account-table.js";
import { Section, When } from "./format.js";

/** A CIBA request waiting for the person's answer, as the account page lists it. */
export interface PendingApproval {
  id: string;
  clientName: string;
  bindingMessage: string | null;
  expiresAt: Date;
}

/** The person's requests still waiting (plugins/ciba), with the name each application registered. */
export async function loadPendingApprovals(db: Kysely<Database>, userId: string): Promise<PendingApproval[]> {
  const pending = await listPendingFor(db, userId);
  return Promise.all(
    pending.map(async (r) => ({ id: r.id, clientName: (await findClientDisplay(db, r.clientId))?.name || r.clientId, bindingMessage: r.bindingMessage, expiresAt: r.expiresAt })),
  );
}

/** Applications asking for approval by OpenID CIBA; each opens its own page (/ciba/<id>) to decide. */
export function ApprovalsSection(props: { approvals: PendingApproval[] }) {
  return (
    <Section id="approvals" title="Requests waiting for you">
      {props.approvals.length ? (
        <AccountTable columns={["Application", "Message", "Expires", "Decide"]}>
          {props.approvals.map((a) => (
            <tr data-ciba-id={a.id}>
              <td>{a.clientName}</td>
              <td>{a.bindingMessage ?? <span class="muted">none</span>}</td>
              <td>
                <When at={a.expiresAt} />
              </td>
              <td>
                <a href={`/ciba/${encodeURIComponent(a.id)}`} aria-label={`Review the request of ${a.clientName}`}>
                  Review
                </a>
              </td>
            </tr>
          ))}
        </AccountTable>
      ) : (
        <p class="muted">No application is waiting for your approval.</p>
      )}
    </Section>
  );
}

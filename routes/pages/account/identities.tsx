import { Hono } from "hono";
import { confirmBapIdentity, makePrimary } from "../../../plugins/bap-identity/store.js";
import { removeBapIdentityKeepingAWayIn } from "../../../plugins/sign-in-methods/index.js";
import { readForm } from "../form-replay.js";
import type { PageContext, PageEnv } from "../page-env.js";
import { AccountTable, PostButton } from "./account-table.js";
import { Section } from "./format.js";
import { accountForm, backWith, backWithError, backWithNotice } from "./outcome.js";
import type { BapIdentityRow } from "../../../plugins/accounts/store.js";

/**
 * BAP identities registered to the account (routes/profile/shared.ts); the primary one is what apps see
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
        <AccountTable columns={["Identity", "Address"]} actions="Status and actions">
          {props.identities.map((i) => {
            const label = i.name ?? i.bapId;
            const fields = { bap_id: i.bapId };
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
                      <strong>Suspended</strong> <PostButton action="/account/identities/confirm" fields={fields} text="Confirm" label={`Confirm: ${label}`} />
                    </>
                  ) : i.isPrimary ? (
                    <strong>Primary</strong>
                  ) : (
                    <PostButton action="/account/identities/primary" fields={fields} text="Make primary" label={`Make primary: ${label}`} />
                  )}{" "}
                  <PostButton action="/account/identities/remove" fields={fields} text="Remove" label={`Remove: ${label}`} />
                </td>
              </tr>
            );
          })}
        </AccountTable>
      ) : (
        <p class="muted">No BAP identity is registered to this account.</p>
      )}
    </Section>
  );
}

/** The identity the form names, owned by the signed-in person; "" when it names none. */
const bapIdOf = async (c: PageContext) => (await readForm(c)).bap_id ?? "";

async function makeIdentityPrimary(c: PageContext) {
  const bapId = await bapIdOf(c);
  return backWith(bapId ? await makePrimary(c.var.page.db, c.var.session.user.id, bapId) : false, "primary-identity-set", "identities");
}

async function confirmIdentity(c: PageContext) {
  const bapId = await bapIdOf(c);
  return backWith(bapId ? await confirmBapIdentity(c.var.page.db, c.var.session.user.id, bapId) : false, "identity-confirmed", "identities");
}

async function removeIdentity(c: PageContext) {
  const { db, auth } = c.var.page;
  const bapId = await bapIdOf(c);
  const result = bapId ? await removeBapIdentityKeepingAWayIn(db, auth.$context, c.var.session.user.id, bapId) : "not-found";
  if (result === "removed") return backWithNotice(null, "identity-removed", "identities");
  return backWithError(null, "identities", result === "last-sign-in-method" ? "LAST_SIGN_IN_METHOD" : "NOT_FOUND");
}

/** Mounted at /account. */
export const identityRoutes = new Hono<PageEnv>()
  .post("/identities/primary", ...accountForm, makeIdentityPrimary)
  .post("/identities/confirm", ...accountForm, confirmIdentity)
  .post("/identities/remove", ...accountForm, removeIdentity);

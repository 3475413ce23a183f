import { Hono } from "hono";
import { readForm } from "../form-replay.js";
import type { PageContext, PageEnv } from "../page-env.js";
import { AccountTable, PostButton } from "./account-table.js";
import { Section, When } from "./format.js";
import { accountForm, backWithError, outcomeHref, replayThenBack } from "./outcome.js";
import type { PasskeyRow } from "../../../plugins/accounts/store.js";

/** Passkeys: rename and delete here; adding one is client/passkeys.ts, straight to better-auth. */
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
        <AccountTable columns={["Passkey", "Added"]} actions="Actions">
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
                  <PostButton action="/account/passkeys/delete" fields={{ id: p.id }} text="Delete" label={`Delete ${label}`} />
                </td>
              </tr>
            );
          })}
        </AccountTable>
      ) : (
        <p class="muted">You have no passkeys yet.</p>
      )}
      <form
        id="passkey-add"
        hidden
        data-options-path={`${props.basePath}/passkey/generate-register-options`}
        data-verify-path={`${props.basePath}/passkey/verify-registration`}
        data-done={outcomeHref("passkeys", "notice=passkey-added")}
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

async function renamePasskey(c: PageContext) {
  const f = await readForm(c);
  const name = (f.name ?? "").trim();
  if (!f.id || !name || name.length > 100) return backWithError(null, "passkeys", "INVALID_INPUT");
  return replayThenBack(c, "/passkey/update-passkey", { id: f.id, name }, "passkey-renamed", "passkeys");
}

async function deletePasskey(c: PageContext) {
  const id = (await readForm(c)).id;
  if (!id) return backWithError(null, "passkeys", "NOT_FOUND");
  // plugins/passkey-rules refuses (LAST_SIGN_IN_METHOD) when this is the last way to sign in.
  return replayThenBack(c, "/passkey/delete-passkey", { id }, "passkey-deleted", "passkeys");
}

/** Mounted at /account. */
export const passkeyRoutes = new Hono<PageEnv>().post("/passkeys/rename", ...accountForm, renamePasskey).post("/passkeys/delete", ...accountForm, deletePasskey);

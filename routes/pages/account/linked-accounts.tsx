import { Hono } from "hono";
import type { SignInProvider } from "../../../lib/social-providers.js";
import { callAuth, readForm } from "../form-replay.js";
import type { PageContext, PageEnv } from "../page-env.js";
import { redirectWith } from "../render.js";
import { AccountTable, PostButton } from "./account-table.js";
import { Section, When } from "./format.js";
import { accountForm, backWithError, outcomeHref, replayThenBack } from "./outcome.js";
import type { LinkedAccount } from "../../../plugins/accounts/store.js";

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
        <AccountTable columns={["Provider", "Linked"]} actions="Action">
          {social.map((a) => (
            <tr>
              <td>{nameOf(a.providerId)}</td>
              <td>
                <When at={a.createdAt} />
              </td>
              <td>
                {/* plugins/social decides: an account that is the last way to sign in stays. */}
                <PostButton action="/account/accounts/unlink" fields={{ account: a.id }} text="Unlink" label={`Unlink ${nameOf(a.providerId)}`} />
              </td>
            </tr>
          ))}
        </AccountTable>
      ) : (
        <p class="muted">No social account is linked.</p>
      )}
      {linkable.map((p) => (
        <PostButton action="/account/accounts/link" fields={{ provider: p.id }} text={`Link ${p.name}`} />
      ))}
    </Section>
  );
}

async function linkAccount(c: PageContext) {
  const { authUrl, socialProviders } = c.var.page;
  const chosen = (await readForm(c)).provider;
  const provider = socialProviders.find((p) => p.id === chosen);
  if (!provider) return backWithError(null, "accounts", "NOT_FOUND");
  const upstream = await callAuth(c, "/link-social", {
    provider: provider.id,
    callbackURL: `${authUrl}${outcomeHref("accounts", "notice=account-linked")}`,
    errorCallbackURL: `${authUrl}${outcomeHref("accounts", "error=LINK_FAILED")}`,
  });
  const data = upstream.ok ? ((await upstream.clone().json().catch(() => null)) as { url?: unknown } | null) : null;
  // The provider's authorization URL; better-auth set the state cookie that comes with it.
  return typeof data?.url === "string" ? redirectWith(upstream, data.url) : backWithError(upstream, "accounts", upstream.ok ? "LINK_FAILED" : undefined);
}

async function unlinkAccount(c: PageContext) {
  // better-auth's account row id (the password's row is not offered on the page).
  const account = (await readForm(c)).account;
  if (!account) return backWithError(null, "accounts", "NOT_FOUND");
  // plugins/social refuses (LAST_SIGN_IN_METHOD) when this is the last way to sign in.
  return replayThenBack(c, "/unlink-account", { accountId: account }, "account-unlinked", "accounts");
}

/** Mounted at /account. */
export const linkedAccountRoutes = new Hono<PageEnv>().post("/accounts/link", ...accountForm, linkAccount).post("/accounts/unlink", ...accountForm, unlinkAccount);

import { Hono } from "hono";
import { callAuth, readForm } from "../form-replay.js";
import type { PageContext, PageEnv } from "../page-env.js";
import { Section } from "./format.js";
import { accountForm, backWithError, backWithNotice, outcomeHref, replayThenBack } from "./outcome.js";

export function ProfileSection(props: { name: string; email: string; emailVerified: boolean }) {
  return (
    <Section id="profile" title="Profile and e-mail">
      <form method="post" action="/account/profile">
        <label for="profile-name">Name</label>
        <input id="profile-name" name="name" type="text" autocomplete="name" maxlength={200} required value={props.name} />
        <button type="submit">Save name</button>
      </form>
      <p>
        Your e-mail address is <strong>{props.email}</strong> {props.emailVerified ? "(verified)." : "(not verified)."}
      </p>
      <form method="post" action="/account/email">
        <label for="profile-email">New e-mail address</label>
        <input id="profile-email" name="email" type="email" autocomplete="email" required />
        <label for="profile-email-password">Your password</label>
        <input id="profile-email-password" name="password" type="password" autocomplete="current-password" />
        <p class="muted">Not needed if you signed in a few minutes ago. The new address gets a link; the change happens when you follow it.</p>
        <button type="submit">Change e-mail</button>
      </form>
    </Section>
  );
}

async function changeName(c: PageContext) {
  const name = ((await readForm(c)).name ?? "").trim();
  if (!name || name.length > 200) return backWithError(null, "profile", "INVALID_INPUT");
  return replayThenBack(c, "/update-user", { name }, "name-changed", "profile");
}

async function changeEmail(c: PageContext) {
  const form = await readForm(c);
  const newEmail = (form.email ?? "").trim();
  if (!newEmail) return backWithError(null, "profile", "INVALID_INPUT");
  // Re-authentication (plugins/account-email): the password, unless the session is only minutes old.
  const reauth = form.password ? { currentPassword: form.password } : {};
  const upstream = await callAuth(c, "/change-email", { newEmail, ...reauth, callbackURL: `${c.var.page.authUrl}${outcomeHref("profile", "notice=email-changed")}` });
  if (!upstream.ok) return backWithError(upstream, "profile");
  // plugins/account-email says which: changed now, or a confirmation mail went out.
  const data = (await upstream.clone().json().catch(() => null)) as { message?: unknown } | null;
  return backWithNotice(upstream, data?.message === "Email updated" ? "email-changed" : "email-verification-sent", "profile");
}

/** Mounted at /account. */
export const profileRoutes = new Hono<PageEnv>().post("/profile", ...accountForm, changeName).post("/email", ...accountForm, changeEmail);

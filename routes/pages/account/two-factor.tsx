import { Hono } from "hono";
import { callAuth, readForm, upstreamError } from "../form-replay.js";
import type { PageContext, PageEnv } from "../page-env.js";
import { html, withCookiesOf } from "../render.js";
import { Section } from "./format.js";
import { errorWords } from "./messages.js";
import { accountForm, backWithError, backWithNotice, replayThenBack } from "./outcome.js";
import { BackupCodesPage, TwoFactorSetupPage, TwoFactorVerifyPage } from "./two-factor-page.js";

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

/**
 * Turning two-factor (TOTP) on and off, and new backup codes; mounted at /account/two-factor.
 *
 * better-auth's steps: /two-factor/enable (password) stores an unverified secret and answers
 * its otpauth URI; /two-factor/verify-totp with a code from the app marks it verified, turns
 * two-factor on and replaces the session (cookie). Only then are the backup codes shown, read
 * with the server-only viewBackupCodes: they are shown once, when they start to work.
 */
const ANCHOR = "two-factor";

/** The password the person typed: what better-auth's two-factor endpoints ask for. */
const password = async (c: PageContext) => ({ password: (await readForm(c)).password ?? "" });

async function enable(c: PageContext) {
  const upstream = await callAuth(c, "/two-factor/enable", await password(c));
  if (!upstream.ok) return backWithError(upstream, ANCHOR);
  const data = (await upstream.json().catch(() => null)) as { totpURI?: unknown } | null;
  if (typeof data?.totpURI !== "string") return backWithError(null, ANCHOR, "FAILED");
  return withCookiesOf(upstream, html(c, <TwoFactorSetupPage totpURI={data.totpURI} />));
}

async function verify(c: PageContext) {
  const { auth } = c.var.page;
  const session = c.var.session;
  // Only the step that turns two-factor on shows the codes: never again for a valid code later.
  if ((session.user as { twoFactorEnabled?: boolean | null }).twoFactorEnabled) return backWithNotice(null, "two-factor-enabled", ANCHOR);
  const code = ((await readForm(c)).code ?? "").replace(/\s+/g, "");
  const upstream = await callAuth(c, "/two-factor/verify-totp", { code });
  if (!upstream.ok) {
    const { code: reason } = await upstreamError(upstream);
    if (upstream.status === 401 && reason !== "INVALID_CODE") return backWithError(upstream, ANCHOR);
    return html(c, <TwoFactorVerifyPage error={errorWords(auth, reason ?? "INVALID_CODE") ?? "That code is not right."} />, 400);
  }
  const codes = await auth.api.viewBackupCodes({ body: { userId: session.user.id } }).catch(() => null);
  const res = codes?.backupCodes?.length ? html(c, <BackupCodesPage codes={codes.backupCodes} justEnabled />) : backWithNotice(null, "two-factor-enabled", ANCHOR);
  // verify-totp replaced the session: the browser must get the new cookie with this page.
  return withCookiesOf(upstream, res);
}

async function newBackupCodes(c: PageContext) {
  const upstream = await callAuth(c, "/two-factor/generate-backup-codes", await password(c));
  if (!upstream.ok) return backWithError(upstream, ANCHOR);
  const data = (await upstream.json().catch(() => null)) as { backupCodes?: unknown } | null;
  const codes = Array.isArray(data?.backupCodes) ? data.backupCodes.filter((x): x is string => typeof x === "string") : [];
  return codes.length ? html(c, <BackupCodesPage codes={codes} justEnabled={false} />) : backWithError(null, ANCHOR, "FAILED");
}

const disable = async (c: PageContext) => replayThenBack(c, "/two-factor/disable", await password(c), "two-factor-disabled", ANCHOR);

export const twoFactorRoutes = new Hono<PageEnv>()
  .post("/enable", ...accountForm, enable)
  .post("/verify", ...accountForm, verify)
  .post("/backup-codes", ...accountForm, newBackupCodes)
  .post("/disable", ...accountForm, disable);

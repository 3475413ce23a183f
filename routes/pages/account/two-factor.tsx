import { Hono } from "hono";
import type { PageKit } from "../page-kit.js";
import { upstreamError } from "../page-kit.js";
import type { AccountActions } from "./actions.js";
import { errorWords } from "./messages.js";
import { BackupCodesPage, TwoFactorSetupPage, TwoFactorVerifyPage } from "./two-factor-pages.js";

/**
 * Turning two-factor (TOTP) on and off, and new backup codes; mounted at /account/two-factor.
 *
 * better-auth's steps: /two-factor/enable (password) stores an unverified secret and answers
 * its otpauth URI; /two-factor/verify-totp with a code from the app marks it verified, turns
 * two-factor on and replaces the session (cookie). Only then are the backup codes shown, read
 * with the server-only viewBackupCodes: they are shown once, when they start to work.
 */
export function twoFactorRoutes(kit: PageKit, act: AccountActions) {
  const app = new Hono();
  const ANCHOR = "two-factor";

  app.post("/enable", async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    const upstream = await kit.callAuth(c, "/two-factor/enable", { password: (await kit.form(c)).password ?? "" });
    if (!upstream.ok) return act.failed(upstream, ANCHOR);
    const data = (await upstream.json().catch(() => null)) as { totpURI?: unknown } | null;
    if (typeof data?.totpURI !== "string") return act.failed(null, ANCHOR, "FAILED");
    const res = kit.html(c, <TwoFactorSetupPage totpURI={data.totpURI} />);
    for (const cookie of upstream.headers.getSetCookie()) res.headers.append("set-cookie", cookie);
    return res;
  });

  app.post("/verify", async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    // Only the step that turns two-factor on shows the codes: never again for a valid code later.
    if ((session.user as { twoFactorEnabled?: boolean | null }).twoFactorEnabled) return act.done(null, "two-factor-enabled", ANCHOR);
    const code = ((await kit.form(c)).code ?? "").replace(/\s+/g, "");
    const upstream = await kit.callAuth(c, "/two-factor/verify-totp", { code });
    if (!upstream.ok) {
      const { code: reason } = await upstreamError(upstream);
      if (upstream.status === 401 && reason !== "INVALID_CODE") return act.failed(upstream, ANCHOR);
      return kit.html(c, <TwoFactorVerifyPage error={errorWords(kit.auth, reason ?? "INVALID_CODE") ?? "That code is not right."} />, 400);
    }
    const codes = await kit.auth.api.viewBackupCodes({ body: { userId: session.user.id } }).catch(() => null);
    const res = codes?.backupCodes?.length ? kit.html(c, <BackupCodesPage codes={codes.backupCodes} justEnabled />) : act.done(null, "two-factor-enabled", ANCHOR);
    // verify-totp replaced the session: the browser must get the new cookie with this page.
    for (const cookie of upstream.headers.getSetCookie()) res.headers.append("set-cookie", cookie);
    return res;
  });

  app.post("/backup-codes", async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    const upstream = await kit.callAuth(c, "/two-factor/generate-backup-codes", { password: (await kit.form(c)).password ?? "" });
    if (!upstream.ok) return act.failed(upstream, ANCHOR);
    const data = (await upstream.json().catch(() => null)) as { backupCodes?: unknown } | null;
    const codes = Array.isArray(data?.backupCodes) ? data.backupCodes.filter((x): x is string => typeof x === "string") : [];
    return codes.length ? kit.html(c, <BackupCodesPage codes={codes} justEnabled={false} />) : act.failed(null, ANCHOR, "FAILED");
  });

  app.post("/disable", async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    return act.replay(c, "/two-factor/disable", { password: (await kit.form(c)).password ?? "" }, "two-factor-disabled", ANCHOR);
  });

  return app;
}

import { Hono } from "hono";
import { DEVICE_DECISION_ERRORS } from "../../plugins/device/decision.js";
import { formatUserCode, normalizeUserCode } from "../../plugins/device/user-code.js";
import { findClientDisplay } from "../../plugins/oauth-store/clients.js";
import { DeviceCodeEntryPage, DeviceConfirmPage, DeviceDonePage } from "./device-page.js";
import { callAuth, getFromAuth, readForm } from "./form-replay.js";
import { ownPagesOnly, signInFirst, type PageContext, type PageEnv } from "./page-env.js";
import { html } from "./render.js";
import { signInThenBack } from "./return-to.js";
import { showBrandOf } from "./brand.js";

/** better-auth's answer to GET /device?user_code (the verify step). */
interface Verification {
  status?: string;
  client_id?: string;
  scope?: string;
}

const TOO_MANY = "Too many attempts. Wait a minute and try again.";
const INVALID = "That code is not valid. Check it on your device and try again.";
const EXPIRED = "That code has expired. Start again on your device to get a new one.";
const USED = "That code was already used. Start again on your device if you still need to connect it.";

const devicePath = (code: string | undefined) => (code ? `/device?${new URLSearchParams({ user_code: code })}` : "/device");

async function failure(c: PageContext, res: Response, code: string) {
  if (res.status === 429) return html(c, <DeviceCodeEntryPage code={code} error={TOO_MANY} />, 429);
  const body = (await res.json().catch(() => null)) as { error?: unknown; error_description?: unknown } | null;
  // Answered already (in another tab, or by a second click that lost the race).
  if (body?.error_description === DEVICE_DECISION_ERRORS.alreadyProcessed) return html(c, <DeviceCodeEntryPage error={USED} />, 400);
  return html(c, <DeviceCodeEntryPage code={code} error={body?.error === "expired_token" ? EXPIRED : INVALID} />, 400);
}

async function showDevice(c: PageContext) {
  const typed = c.req.query("user_code");
  if (typed === undefined) return html(c, <DeviceCodeEntryPage />);

  const code = normalizeUserCode(typed);
  if (!code) return html(c, <DeviceCodeEntryPage code={typed} error={INVALID} />, 400);
  const res = await getFromAuth(c, "/device", { user_code: code });
  if (!res.ok) return failure(c, res, formatUserCode(code));
  const found = (await res.json()) as Verification;
  // No client_id: someone else already claimed this code. Say no more than for a wrong code.
  if (!found.client_id) return html(c, <DeviceCodeEntryPage code={formatUserCode(code)} error={INVALID} />, 400);
  if (found.status !== "pending") return html(c, <DeviceCodeEntryPage error={USED} />, 400);

  const client = await findClientDisplay(c.var.page.db, found.client_id);
  const brand = await showBrandOf(c, found.client_id);
  const scopes = (found.scope ?? "").split(" ").filter(Boolean);
  return html(c, <DeviceConfirmPage code={formatUserCode(code)} clientName={brand?.displayName || client?.name || found.client_id} clientUri={client?.uri} scopes={scopes} />);
}

async function decideDevice(c: PageContext) {
  const f = await readForm(c);
  const code = normalizeUserCode(f.user_code);
  if (!code) return html(c, <DeviceCodeEntryPage code={f.user_code} error={INVALID} />, 400);
  const approve = f.decision === "approve";
  const res = await callAuth(c, approve ? "/device/approve" : "/device/deny", { userCode: code });
  if (res.status === 401) return c.redirect(signInThenBack(devicePath(code)), 303);
  if (!res.ok) return failure(c, res, formatUserCode(code));
  return html(c, <DeviceDonePage approved={approve} />);
}

/**
 * /device, the RFC 8628 verification page (`verification_uri`). A signed-in person enters the
 * code (or arrives with it from `verification_uri_complete`), sees which application asks for
 * what, and approves or denies. Not signed in: to the sign-in page and back.
 *
 * Every code lookup goes through better-auth's own endpoints (GET /device, POST
 * /device/approve, /device/deny) with the browser's address, so their per-IP rate limit
 * against guessing applies here too. The first signed-in lookup binds the code to that person:
 * nobody else can approve it afterwards.
 */
export const devicePageRoutes = new Hono<PageEnv>()
  .get("/device", signInFirst((c) => devicePath(c.req.query("user_code"))), showDevice)
  .post("/device", ownPagesOnly, decideDevice);

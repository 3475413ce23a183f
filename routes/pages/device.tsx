import { Hono, type Context } from "hono";
import type { Kysely } from "kysely";
import type { Auth } from "../../auth.config.js";
import { BASE_PATH, CLIENT_IP_HEADER } from "../../lib/transport.js";
import { formatUserCode, normalizeUserCode } from "../../plugins/device/user-code.js";
import { ErrorPage } from "./consent.js";
import { DeviceCodeEntryPage, DeviceConfirmPage, DeviceDonePage } from "./device-page.js";
import { pageKit } from "./page-kit.js";
import { signInThenBack } from "./return-to.js";

interface DevicePageDeps {
  auth: Auth;
  db: Kysely<any>;
  authUrl: string;
}

/** better-auth's answer to GET /device?user_code (the verify step). */
interface Verification {
  status?: string;
  client_id?: string;
  scope?: string;
}

const TOO_MANY = "Too many attempts. Wait a minute and try again.";
const INVALID = "That code is not valid. Check it on your device and try again.";
const EXPIRED = "That code has expired. Start again on your device to get a new one.";

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
export function devicePageRoutes({ auth, db, authUrl }: DevicePageDeps) {
  const kit = pageKit(auth, authUrl);
  const app = new Hono();

  async function verify(c: Context, code: string): Promise<Response> {
    const headers = new Headers({ accept: "application/json" });
    for (const name of ["cookie", CLIENT_IP_HEADER, "user-agent"]) {
      const value = c.req.header(name);
      if (value) headers.set(name, value);
    }
    return auth.handler(new Request(`${authUrl}${BASE_PATH}/device?${new URLSearchParams({ user_code: code })}`, { headers }));
  }

  async function failure(c: Context, res: Response, code: string) {
    if (res.status === 429) return kit.html(c, <DeviceCodeEntryPage code={code} error={TOO_MANY} />, 429);
    const body = (await res.json().catch(() => null)) as { error?: unknown } | null;
    return kit.html(c, <DeviceCodeEntryPage code={code} error={body?.error === "expired_token" ? EXPIRED : INVALID} />, 400);
  }

  app.get("/device", async (c) => {
    const typed = c.req.query("user_code");
    const session = await auth.api.getSession({ headers: c.req.raw.headers });
    if (!session) return c.redirect(signInThenBack(typed ? `/device?${new URLSearchParams({ user_code: typed })}` : "/device"), 303);
    if (typed === undefined) return kit.html(c, <DeviceCodeEntryPage />);

    const code = normalizeUserCode(typed);
    if (!code) return kit.html(c, <DeviceCodeEntryPage code={typed} error={INVALID} />, 400);
    const res = await verify(c, code);
    if (!res.ok) return failure(c, res, formatUserCode(code));
    const found = (await res.json()) as Verification;
    // No client_id: someone else already claimed this code. Say no more than for a wrong code.
    if (!found.client_id) return kit.html(c, <DeviceCodeEntryPage code={formatUserCode(code)} error={INVALID} />, 400);
    if (found.status !== "pending") return kit.html(c, <DeviceCodeEntryPage error="That code was already used. Start again on your device if you still need to connect it." />, 400);

    const client = await db.selectFrom("oauthClient").select(["name", "uri"]).where("clientId", "=", found.client_id).executeTakeFirst();
    const scopes = (found.scope ?? "").split(" ").filter(Boolean);
    return kit.html(c, <DeviceConfirmPage code={formatUserCode(code)} clientName={client?.name || found.client_id} clientUri={client?.uri} scopes={scopes} />);
  });

  app.post("/device", async (c) => {
    if (!kit.sameOrigin(c)) return kit.html(c, <ErrorPage error="invalid_request" description="This form must be sent from our own page." />, 403);
    const f = await kit.form(c);
    const code = normalizeUserCode(f.user_code);
    if (!code) return kit.html(c, <DeviceCodeEntryPage code={f.user_code} error={INVALID} />, 400);
    const approve = f.decision === "approve";
    const res = await kit.callAuth(c, approve ? "/device/approve" : "/device/deny", { userCode: code });
    if (res.status === 401) return c.redirect(signInThenBack(`/device?${new URLSearchParams({ user_code: code })}`), 303);
    if (!res.ok) return failure(c, res, formatUserCode(code));
    return kit.html(c, <DeviceDonePage approved={approve} />);
  });

  return app;
}

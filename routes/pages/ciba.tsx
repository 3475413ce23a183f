import { Hono } from "hono";
import { CIBA_ERROR_CODES } from "../../plugins/ciba/error-codes.js";
import { signedInStrongly } from "../../plugins/ciba/strong.js";
import { findRequestFor, type CibaRequest } from "../../plugins/ciba/store.js";
import { findClientDisplay } from "../../plugins/oauth-store/clients.js";
import { CibaConfirmPage, CibaDonePage, CibaGonePage, type CibaRequestView } from "./ciba-page.js";
import { callAuth, readForm } from "./form-replay.js";
import { ownPagesOnly, signInFirst, type PageContext, type PageEnv } from "./page-env.js";
import { html } from "./render.js";
import { signInThenBack } from "./return-to.js";

const requestPath = (id: string) => `/ciba/${encodeURIComponent(id)}`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The request `id` if it is this person's and still waiting; anyone else's is as unknown as none. */
async function pendingRequest(c: PageContext, id: string): Promise<CibaRequest | null> {
  if (!UUID.test(id)) return null;
  const request = await findRequestFor(c.var.page.db, id, c.var.session!.user.id);
  return request && request.status === "pending" && request.expiresAt > new Date() ? request : null;
}

async function viewOf(c: PageContext, request: CibaRequest): Promise<CibaRequestView> {
  const client = await findClientDisplay(c.var.page.db, request.clientId);
  const context = await c.var.page.auth.$context;
  return {
    id: request.id,
    clientName: client?.name || request.clientId,
    clientUri: client?.uri ?? null,
    bindingMessage: request.bindingMessage,
    scopes: request.scope.split(" ").filter(Boolean),
    details: request.authorizationDetails ? JSON.parse(request.authorizationDetails) : [],
    expiresAt: request.expiresAt,
    strong: request.strong,
    strongSession: request.strong ? await signedInStrongly(context.internalAdapter, { id: c.var.session!.session.id, userId: request.userId }) : false,
  };
}

async function showRequest(c: PageContext) {
  const request = await pendingRequest(c, c.req.param("id")!);
  if (!request) return html(c, <CibaGonePage />, 404);
  return html(c, <CibaConfirmPage request={await viewOf(c, request)} strongSignInHref={signInThenBack(requestPath(request.id))} />);
}

async function decideRequest(c: PageContext) {
  const id = c.req.param("id")!;
  const f = await readForm(c);
  const approve = f.decision === "approve";
  const res = await callAuth(c, "/ciba/decide", { id, decision: approve ? "approve" : "deny" });
  if (res.status === 401) return c.redirect(signInThenBack(requestPath(id)), 303);
  if (res.ok) return html(c, <CibaDonePage approved={approve} />);
  const body = (await res.json().catch(() => null)) as { code?: unknown } | null;
  const request = body?.code === "STRONG_APPROVAL_REQUIRED" && c.var.session ? await pendingRequest(c, id) : null;
  if (request) return html(c, <CibaConfirmPage request={await viewOf(c, request)} error={CIBA_ERROR_CODES.STRONG_APPROVAL_REQUIRED.message} strongSignInHref={signInThenBack(requestPath(id))} />, 403);
  if (res.status === 429) return html(c, <CibaGonePage />, 429);
  return html(c, <CibaGonePage />, 404);
}

/**
 * /ciba/<id>: where a person approves or denies what an application asked for by OpenID CIBA
 * (plugins/ciba). The e-mail and the account page link here. Not signed in: to the sign-in page
 * and back. The decision is plugins/ciba's POST /ciba/decide, replayed with the browser's
 * session, which holds the rules (only the person named, strong approval when asked).
 */
export const cibaPageRoutes = new Hono<PageEnv>()
  .get("/ciba/:id", signInFirst((c) => requestPath(c.req.param("id") ?? "")), showRequest)
  .post("/ciba/:id", ownPagesOnly, signInFirst((c) => requestPath(c.req.param("id") ?? "")), decideRequest);

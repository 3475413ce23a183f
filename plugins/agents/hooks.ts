import { APIError, createAuthMiddleware, getSessionFromCtx } from "better-auth/api";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { AGENT_ERROR_CODES as CODES } from "./error-codes.js";

/**
 * Two checks that run before agent-auth's own before-hook.
 *
 * 1. Pause. agent-auth knows no "paused" state, so the owner's pause (routes/agents.ts) sets
 *    the agent's or host's status to `paused` and every JWT naming it is refused here. This
 *    must run before agent-auth verifies the JWT: that step transparently reactivates an agent
 *    whose session lapsed, which would otherwise turn `paused` back into `active`. The JWT is
 *    only decoded to find the agent; refusing on an unverified claim grants nothing.
 *
 * 2. Ownership. agent-auth lets a user update or revoke another user's host when the two
 *    share an organization, and lets any signed-in user grant capabilities to an agent with
 *    no `userId` yet (a pending agent registered with force_approval). Both would let
 *    someone widen what an agent may do for another person's account without that person's
 *    say. Here only the owner may: the host's user, or the agent's (or its host's) user.
 */

const JWT_PATHS = ["/agent/", "/capability/", "/host/"];
const OWNER_PATHS = new Set(["/host/update", "/host/revoke", "/agent/grant-capability"]);

interface Row {
  id: string;
  userId?: string | null;
  hostId?: string | null;
  status?: string;
}

/** typ, sub, iss of a bearer agent or host JWT, unverified; null for anything else (a session token). */
function agentJwtOf(headers: Headers | undefined): { typ: string; sub?: string; iss?: string } | null {
  const bearer = /^Bearer\s+(\S+)$/i.exec(headers?.get("authorization") ?? "")?.[1];
  if (!bearer || bearer.split(".").length !== 3) return null;
  try {
    const typ = decodeProtectedHeader(bearer).typ;
    if (typ !== "agent+jwt" && typ !== "host+jwt") return null;
    const claims = decodeJwt(bearer);
    return { typ, sub: typeof claims.sub === "string" ? claims.sub : undefined, iss: typeof claims.iss === "string" ? claims.iss : undefined };
  } catch {
    return null;
  }
}

const paused = (error: string, what: string) => new APIError("FORBIDDEN", { error, message: `This ${what} is paused by its owner.` });

export function pauseGuard() {
  return {
    matcher: (ctx: { path?: string; headers?: Headers }) => Boolean(ctx.path && JWT_PATHS.some((p) => ctx.path!.startsWith(p)) && agentJwtOf(ctx.headers)),
    handler: createAuthMiddleware(async (ctx) => {
      const jwt = agentJwtOf(ctx.headers);
      if (!jwt) return;
      const adapter = ctx.context.adapter;
      const hostById = (id: string) => adapter.findOne<Row>({ model: "agentHost", where: [{ field: "id", value: id }] });
      let hostId: string | null | undefined;
      if (jwt.typ === "agent+jwt" && jwt.sub) {
        const agent = await adapter.findOne<Row>({ model: "agent", where: [{ field: "id", value: jwt.sub }] });
        if (agent?.status === "paused") throw paused(CODES.AGENT_PAUSED, "agent");
        hostId = agent?.hostId;
      } else if (jwt.typ === "host+jwt" && jwt.iss) {
        hostId = (await hostById(jwt.iss))?.id ?? (await adapter.findOne<Row>({ model: "agentHost", where: [{ field: "kid", value: jwt.iss }] }))?.id;
      }
      if (hostId && (await hostById(hostId))?.status === "paused") throw paused(CODES.HOST_PAUSED, "host");
    }),
  };
}

export function ownerGuard() {
  return {
    matcher: (ctx: { path?: string; headers?: Headers }) => Boolean(ctx.path && OWNER_PATHS.has(ctx.path) && !agentJwtOf(ctx.headers)),
    handler: createAuthMiddleware(async (ctx) => {
      const session = await getSessionFromCtx(ctx);
      if (!session) return; // the endpoint answers 401 itself
      const body = (ctx.body ?? {}) as { host_id?: unknown; agent_id?: unknown };
      const adapter = ctx.context.adapter;
      const hostOwner = async (id: unknown) => (typeof id === "string" ? ((await adapter.findOne<Row>({ model: "agentHost", where: [{ field: "id", value: id }] }))?.userId ?? null) : null);
      if (ctx.path === "/agent/grant-capability") {
        if (typeof body.agent_id !== "string") return;
        const agent = await adapter.findOne<Row>({ model: "agent", where: [{ field: "id", value: body.agent_id }] });
        if (!agent) return; // 404 from the endpoint
        const owner = agent.userId ?? (await hostOwner(agent.hostId));
        if (owner !== session.user.id) throw new APIError("FORBIDDEN", { error: "unauthorized", message: "Only the agent's owner may grant it capabilities." });
        return;
      }
      if (typeof body.host_id !== "string") return;
      const host = await adapter.findOne<Row>({ model: "agentHost", where: [{ field: "id", value: body.host_id }] });
      // Someone else's host answers like a missing one, as agent-auth does.
      if (host && host.userId !== session.user.id) throw new APIError("NOT_FOUND", { error: "host_not_found", message: "Host not found" });
    }),
  };
}

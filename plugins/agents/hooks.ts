import { agentError } from "@better-auth/agent-auth";
import { createAuthMiddleware } from "better-auth/api";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { AGENT_ERROR_CODES as CODES } from "./error-codes.js";

/**
 * Pause. agent-auth knows no "paused" state, so the owner's pause (routes/agents/agents.ts) sets the
 * agent's or host's status to `paused` and every JWT naming it is refused here. This must run
 * before agent-auth verifies the JWT: that step transparently reactivates an agent whose
 * session lapsed, which would otherwise turn `paused` back into `active`. The JWT is only
 * decoded to find the agent; refusing on an unverified claim grants nothing.
 *
 * Ownership is ./owner-guard.ts: it runs after agent-auth's hook, on verified credentials.
 */

const JWT_PATHS = ["/agent/", "/capability/", "/host/"];

interface Row {
  id: string;
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
        if (agent?.status === "paused") throw agentError("FORBIDDEN", CODES.AGENT_PAUSED);
        hostId = agent?.hostId;
      } else if (jwt.typ === "host+jwt" && jwt.iss) {
        hostId = (await hostById(jwt.iss))?.id ?? (await adapter.findOne<Row>({ model: "agentHost", where: [{ field: "kid", value: jwt.iss }] }))?.id;
      }
      if (hostId && (await hostById(hostId))?.status === "paused") throw agentError("FORBIDDEN", CODES.HOST_PAUSED);
    }),
  };
}

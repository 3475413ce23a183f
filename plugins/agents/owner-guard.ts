import { AGENT_AUTH_ERROR_CODES, agentError } from "@better-auth/agent-auth";
import { createAuthMiddleware, getSessionFromCtx } from "better-auth/api";

/**
 * Only the owner changes what a host or agent may do, or whom it acts for.
 *
 * agent-auth lets a signed-in user update, revoke or take over (switch-account) a host whose
 * owner merely shares an organization with them (`checkSharedOrg`), lets anyone signed in
 * update or revoke a host with no user yet, and lets anyone signed in grant capabilities to an
 * agent with no `userId` (a pending agent registered with force_approval). Each would let one
 * person widen or redirect what an agent does for another person's account. An organization
 * shares resources between people; it never makes one member the keeper of another's devices
 * (OWASP ASVS 5.0 V8.2.2: data-specific access, no insecure direct object reference).
 *
 * This hook runs AFTER agent-auth's own before-hook, so `ctx.context.hostSession` is set only
 * for a host JWT whose signature, age and audience agent-auth has verified. The rule follows
 * the credential each endpoint really decides by:
 * - a person's session rides along (cookie or bearer session token): the endpoints read
 *   `getSessionFromCtx`, so the session's user must own the target — whatever agent or host
 *   JWT is also on the request (a co-member's own JWT used to switch the old guard off);
 * - no session: /host/revoke acts by the verified host JWT on that host only (agent-auth's own
 *   check); the other three require a session and answer 401 themselves.
 * /host/switch-account also accepts proof by the host key: a verified host JWT of that host
 * (Agent Auth Protocol §2.9: the device moves itself to another account).
 */

const HOST_PATHS = new Set(["/host/update", "/host/revoke", "/host/switch-account"]);
const GUARDED_PATHS = new Set([...HOST_PATHS, "/agent/grant-capability"]);

interface Row {
  id: string;
  userId?: string | null;
  hostId?: string | null;
}
interface HostSession {
  host: { id: string };
}

// Someone else's host answers like a missing one, as agent-auth does for non-members.
const hostNotFound = () => agentError("NOT_FOUND", AGENT_AUTH_ERROR_CODES.HOST_NOT_FOUND);
const notOwner = (message: string) => agentError("FORBIDDEN", AGENT_AUTH_ERROR_CODES.UNAUTHORIZED, message);

export function ownerGuard() {
  return {
    matcher: (ctx: { path?: string }) => Boolean(ctx.path && GUARDED_PATHS.has(ctx.path)),
    handler: createAuthMiddleware(async (ctx) => {
      const session = await getSessionFromCtx(ctx);
      if (!session) return; // see above: host JWT alone, or the endpoint's own 401
      const userId = session.user.id;
      const body = (ctx.body ?? {}) as { host_id?: unknown; agent_id?: unknown };
      const hostSession = (ctx.context as { hostSession?: HostSession }).hostSession;
      const adapter = ctx.context.adapter;
      const find = (model: "agent" | "agentHost", id: unknown) => (typeof id === "string" ? adapter.findOne<Row>({ model, where: [{ field: "id", value: id }] }) : Promise.resolve(null));

      if (ctx.path === "/agent/grant-capability") {
        const agent = await find("agent", body.agent_id);
        if (!agent) return; // 400/404 from the endpoint
        const owner = agent.userId ?? (await find("agentHost", agent.hostId))?.userId ?? null;
        if (owner !== userId) throw notOwner("Only the agent's owner may grant it capabilities.");
        return;
      }

      // /host/revoke without host_id acts on the host of the verified host JWT.
      const hostId = body.host_id ?? (ctx.path === "/host/revoke" ? hostSession?.host.id : undefined);
      const host = await find("agentHost", hostId);
      if (!host) return; // 400/404 from the endpoint
      if (host.userId === userId) return;
      if (ctx.path === "/host/switch-account") {
        if (!host.userId || hostSession?.host.id === host.id) return;
        throw notOwner("Only the host's owner, or the host itself, may move it to another account.");
      }
      throw hostNotFound();
    }),
  };
}

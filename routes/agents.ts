import { Hono, type Context } from "hono";
import type { Kysely } from "kysely";
import type { Auth } from "../auth.config.js";
import { problem, problems } from "../lib/errors.js";
import { PROBLEM_CODES } from "../lib/problem-codes.js";
import { requireSession } from "./session.js";
import * as manage from "../plugins/agents/store.js";

/**
 * The owner's controls over their agents (session only; the account page builds on these):
 *
 *   GET  /api/agents                          hosts, and agents with their grants
 *   POST /api/agents/hosts/{id}/pause|resume|revoke
 *   POST /api/agents/agents/{id}/pause|resume|revoke
 *   POST /api/agents/grants/{id}/revoke
 *
 * Someone else's host, agent or grant answers 404, like a missing one. A state change that
 * does not apply (resuming an active agent, revoking a revoked grant) answers 409.
 */
interface AgentRouteDeps {
  auth: Auth;
  db: Kysely<any>;
  authUrl: string;
}

const NO_STORE = { "cache-control": "no-store" };
const conflict = (detail: string) => problem(PROBLEM_CODES.INVALID_STATE, { detail });

export function agentRoutes({ auth, db, authUrl }: AgentRouteDeps) {
  const userOf = async (c: Context) => (await requireSession(auth, c.req.raw.headers)).user.id;
  const app = new Hono();

  // The cookie alone must not revoke anything: a browser POST from another site is refused
  // (browsers always send Origin on POST; API clients with a bearer session send none).
  app.post("*", async (c, next) => {
    const origin = c.req.header("origin");
    if ((origin && origin !== "null" && origin !== authUrl) || c.req.header("sec-fetch-site") === "cross-site") throw problems.forbidden("This request must come from our own pages.");
    await next();
  });

  app.get("/", async (c) => c.json(await manage.listAgentEstate(db, await userOf(c)), 200, NO_STORE));

  app.post("/hosts/:id/:action{pause|resume|revoke}", async (c) => {
    const host = await manage.findOwnedHost(db, await userOf(c), c.req.param("id"));
    if (!host) throw problems.notFound("You have no agent host with that id.");
    const action = c.req.param("action");
    if (action === "revoke") {
      if (host.status === "revoked") throw conflict("This host is already revoked.");
      const agentsRevoked = await manage.revokeHost(db, host.id);
      return c.json({ id: host.id, status: "revoked", agentsRevoked }, 200, NO_STORE);
    }
    const changed = action === "pause" ? await manage.pauseHost(db, host.id) : await manage.resumeHost(db, host.id);
    if (!changed) throw conflict(action === "pause" ? "Only an active host can be paused." : "Only a paused host can be resumed.");
    return c.json({ id: host.id, status: action === "pause" ? "paused" : "active" }, 200, NO_STORE);
  });

  app.post("/agents/:id/:action{pause|resume|revoke}", async (c) => {
    const agent = await manage.findOwnedAgent(db, await userOf(c), c.req.param("id"));
    if (!agent) throw problems.notFound("You have no agent with that id.");
    const action = c.req.param("action");
    if (action === "revoke") {
      if (agent.status === "revoked") throw conflict("This agent is already revoked.");
      await manage.revokeAgent(db, agent.id);
      return c.json({ id: agent.id, status: "revoked" }, 200, NO_STORE);
    }
    const changed = action === "pause" ? await manage.pauseAgent(db, agent.id) : await manage.resumeAgent(db, agent.id);
    if (!changed) throw conflict(action === "pause" ? "Only an active agent can be paused." : "Only a paused agent can be resumed.");
    return c.json({ id: agent.id, status: action === "pause" ? "paused" : "active" }, 200, NO_STORE);
  });

  app.post("/grants/:id/revoke", async (c) => {
    const grant = await manage.findOwnedGrant(db, await userOf(c), c.req.param("id"));
    if (!grant) throw problems.notFound("You have no capability grant with that id.");
    if (!(await manage.revokeGrant(db, grant.id))) throw conflict("Only an active or pending grant can be revoked.");
    return c.json({ id: grant.id, agentId: grant.agentId, status: "revoked" }, 200, NO_STORE);
  });

  return app;
}

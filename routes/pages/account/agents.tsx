import { Hono } from "hono";
import type { Kysely } from "kysely";
import type { Auth } from "../../../auth.config.js";
import type { PageKit } from "../page-kit.js";
import { Section } from "./format.js";

/*
 * ====================================================================================
 * AGENT AUTH HOOK (issue 4): the account page's "Agents" section is a placeholder.
 *
 * The agent-auth work fills this file; nothing else in the account page needs to change:
 *   - loadAgentAccess(): read the person's agent hosts, agents and capability grants
 *     (it runs on every account page view, with the signed-in user's id);
 *   - AgentAccessSection: render them, with forms that post to /account/agents/...;
 *   - agentAccountRoutes(): those POST routes (mounted at /account/agents by
 *     routes/pages/account/index.tsx). Use kit.sameOrigin(c) first, act through better-auth
 *     (kit.callAuth) or named queries, then answer kit.redirectWith(null,
 *     "/account?notice=<key>#agents") with a key added to NOTICES in ./messages.ts.
 * ====================================================================================
 */

export interface AgentAccessDeps {
  auth: Auth;
  db: Kysely<any>;
}

/** What the section shows. Shape it as the agent work needs; null means "nothing to show yet". */
export type AgentAccessView = null;

export async function loadAgentAccess(_deps: AgentAccessDeps, _userId: string): Promise<AgentAccessView> {
  return null;
}

export function AgentAccessSection(_props: { view: AgentAccessView }) {
  return (
    <Section id="agents" title="Agents">
      <p class="muted">AI agents you let act for you, the hosts they run on and what they may do will be listed here.</p>
    </Section>
  );
}

/** POST routes for pausing and revoking hosts, agents and grants; mounted at /account/agents. */
export function agentAccountRoutes(_kit: PageKit, _deps: AgentAccessDeps) {
  return new Hono();
}

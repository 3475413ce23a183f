import { agentAuth, agentError, type AgentAuthEvent } from "@better-auth/agent-auth";
import type { BetterAuthPlugin } from "better-auth";
import type { ReplayCache } from "../../lib/bitcoin-auth.js";
import type { Logger } from "../../lib/logger.js";
import type { SafeFetch } from "../../lib/safe-fetch.js";
import type { AuditEntry } from "../audit/store.js";
import { approvalGuard } from "./approval-guard.js";
import { approvalLookup } from "./approval-lookup.js";
import { capabilityDefinitions, executeCapability, type CapabilityDeps } from "./capabilities.js";
import { AGENT_ERROR_CODES as CODES } from "./error-codes.js";
import { pauseGuard } from "./hooks.js";
import { hostJwtReplayGuard } from "./host-jwt-replay.js";
import { jwksFetcher, jwksUrlGuard } from "./jwks-fetch.js";
import { ownerGuard } from "./owner-guard.js";

export interface AgentsOptions extends CapabilityDeps {
  /** Our approval page, sent to agents as `verification_uri` (device-style approval). */
  approvalPage: string;
  /** AGENT_DYNAMIC_HOSTS: unknown hosts may register themselves (autonomous agents need it). @default false */
  dynamicHosts?: boolean;
  /** Redis is configured: JWT replay (jti) and JWKS caches are shared by every instance. */
  sharedStorage?: boolean;
  /** Single-use record of host JWT `jti`s: the service's shared replay cache (Redis when configured). */
  replay: ReplayCache;
  /** The guarded fetcher (lib/safe-fetch.ts): every host and agent JWKS is fetched through it. */
  safeFetch: SafeFetch;
  /** TRUST_PROXY: the audience check may read X-Forwarded-Proto. */
  trustProxy?: boolean;
  logger?: Logger;
  /** Records agent approvals and revocations in the audit log (plugins/audit). */
  audit?: (entry: AuditEntry) => Promise<void>;
}

/** agent-auth's events that go to the audit log, and as what. */
const AUDITED_AGENT_EVENTS: Partial<Record<string, AuditEntry["event"]>> = {
  "capability.approved": "agent.approved",
  "agent.revoked": "agent.revoked",
  "host.revoked": "agent.revoked",
};

/**
 * Agent auth (@better-auth/agent-auth, Agent Auth Protocol): hosts, agents, capability grants
 * and approval requests, with this service's capabilities run for real (./capabilities.ts).
 *
 * The endpoint key `deviceCode`: agent-auth names its POST /agent/device/code endpoint
 * `deviceCode`, the same key as the device-authorization plugin's POST /device/code.
 * better-auth merges every plugin's `endpoints` into one object before building the router,
 * so the later plugin silently replaced the earlier one: /device/code answered 404 while
 * discovery still advertised it. Here agent-auth's endpoint is re-keyed `agentDeviceCode`
 * (its path is unchanged: keys only name the server API, paths make the routes), and
 * `assertUniqueEndpointKeys` in auth.config.ts fails start-up if any two plugins ever share
 * a key again.
 */
export function agents(options: AgentsOptions) {
  const capabilities = capabilityDefinitions(options);
  const describe = (name: string) => capabilities.find((c) => c.name === name)?.description;
  const plugin = agentAuth({
    providerName: "identity",
    providerDescription: "BAP identity provider: your profile, identities and encrypted identity backups.",
    capabilities,
    modes: options.dynamicHosts ? ["delegated", "autonomous"] : ["delegated"],
    allowDynamicHostRegistration: options.dynamicHosts ?? false,
    deviceAuthorizationPage: options.approvalPage,
    approvalMethods: ["device_authorization", "ciba"],
    jtiCacheStorage: options.sharedStorage ? "secondary-storage" : "memory",
    jwksCacheStorage: options.sharedStorage ? "secondary-storage" : "memory",
    fetchJwks: jwksFetcher(options.safeFetch, options.logger),
    trustProxy: options.trustProxy ?? false,
    async onExecute({ capability, arguments: args, agentSession }) {
      const userId = agentSession.userId;
      if (!userId) throw agentError("FORBIDDEN", CODES.OWNER_REQUIRED);
      return executeCapability(options, capability, args, { agentId: agentSession.agentId, userId, user: agentSession.user });
    },
    // Audit trail: what happened to whom, never arguments or results (a backup is in them).
    onEvent(event: AgentAuthEvent) {
      options.logger?.info("agent-auth", { event: event.type, agentId: event.agentId, hostId: event.hostId, actorId: event.actorId, ...("capability" in event ? { capability: event.capability, status: event.status } : {}) });
      const audited = AUDITED_AGENT_EVENTS[event.type];
      if (audited) return options.audit?.({ event: audited, userId: event.actorId ?? null, detail: { type: event.type, agentId: event.agentId, hostId: event.hostId } });
    },
  });
  const { deviceCode: agentDeviceCode, ...endpoints } = plugin.endpoints;
  return {
    ...plugin,
    endpoints: { ...endpoints, agentDeviceCode, agentApprovalLookup: approvalLookup(describe) },
    $ERROR_CODES: { ...plugin.$ERROR_CODES, ...CODES },
    // Pause runs before agent-auth's hook (which would reactivate a paused agent); the others
    // after it, so they see only JWTs agent-auth has verified (ctx.context.hostSession).
    hooks: { ...plugin.hooks, before: [pauseGuard(), ...plugin.hooks.before, hostJwtReplayGuard(options.replay), ownerGuard(), approvalGuard(), jwksUrlGuard(options.safeFetch)] },
    // lib/limits.ts (`approval`, `agent`) replaces agent-auth's per-IP rules.
    rateLimit: [],
  } satisfies BetterAuthPlugin;
}

/**
 * better-auth builds one endpoint object from every plugin (`{...a.endpoints, ...b.endpoints}`):
 * two plugins using the same key means one endpoint silently disappears. Fail loudly instead.
 */
export function assertUniqueEndpointKeys(plugins: readonly { id: string; endpoints?: Record<string, unknown> }[]): void {
  const owner = new Map<string, string>();
  for (const plugin of plugins) {
    for (const key of Object.keys(plugin.endpoints ?? {})) {
      const first = owner.get(key);
      if (first) throw new Error(`Plugins "${first}" and "${plugin.id}" both register an endpoint named "${key}": one would silently replace the other.`);
      owner.set(key, plugin.id);
    }
  }
}

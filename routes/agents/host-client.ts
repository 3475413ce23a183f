import { APIError } from "better-auth/api";
import type { Context } from "hono";
import { problem, problems } from "../../lib/errors.js";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";
import { displayNameProblem } from "../../lib/user-facing.js";
import { findOwnedHostKey } from "../../plugins/agents/store.js";
import { HOST_CLIENT_GRANT_TYPES, HOST_CLIENT_METADATA_KEY, hostIdOfClient, hostKeySet } from "../../plugins/host-clients/host-key.js";
import { MACHINE_SCOPE_LIST } from "../../plugins/machine-clients/index.js";
import { deleteClientRow, listOwnedClientsByAuthMethod, updateClientRow } from "../../plugins/oauth-store/adapter.js";
import type { RouteEnv } from "../middleware.js";
import type { AgentRouteDeps } from "./deps.js";

/**
 * POST /api/agents/hosts/{id}/oauth-client: the owner makes an enrolled agent host an OAuth
 * client of its own, with no secret: a confidential client whose only credential is the host's
 * enrolled key (RFC 7523 §2.2 private_key_jwt), for client credentials (RFC 6749 §4.4) and token
 * exchange (RFC 8693). plugins/host-clients keeps the client's key the host's and refuses it
 * once the host is no longer active.
 *
 * Created through oauth-provider's create-client with the owner's own session, so it is the
 * owner's client and counts against their tier's limit like any other. Asking again answers
 * the same client (200; 201 when created). Someone else's host answers 404, like a missing one.
 */
type HostClientEnv = RouteEnv<AgentRouteDeps>;

export const HOST_CLIENT_PATH = "/hosts/:id/oauth-client";

const MAX_CLIENT_NAME = 200;

interface KeyClient {
  clientId: string;
  metadata?: unknown;
}

/** What the host needs to authenticate (RFC 7591 §3.2.1 member names); never a secret: there is none. */
function hostClientAnswer(clientId: string, hostId: string) {
  return { client_id: clientId, host_id: hostId, token_endpoint_auth_method: "private_key_jwt", grant_types: [...HOST_CLIENT_GRANT_TYPES], scope: MACHINE_SCOPE_LIST.join(" ") };
}

/** The host's clients (normally one), oldest id first: when two requests raced, all converge on the first. */
async function hostClientIds(c: Context<HostClientEnv>, userId: string, hostId: string): Promise<string[]> {
  const { adapter } = await c.var.deps.auth.$context;
  const owned = await listOwnedClientsByAuthMethod<KeyClient>(adapter, userId, "private_key_jwt");
  return owned.filter((client) => hostIdOfClient(client.metadata) === hostId).map((client) => client.clientId).sort();
}

/** oauth-provider's create-client as the owner: their session, their tier's limit (plugins/subscriptions). */
async function createOwnedClient(c: Context<HostClientEnv>, hostName: string | null, jwks: object): Promise<string> {
  const name = hostName && !displayNameProblem(hostName, MAX_CLIENT_NAME) ? hostName : "Agent host";
  try {
    const created = await c.var.deps.auth.api.createOAuthClient({
      headers: c.req.raw.headers,
      body: { client_name: name, token_endpoint_auth_method: "private_key_jwt", grant_types: [...HOST_CLIENT_GRANT_TYPES], jwks: jwks as never },
    });
    return created.client_id;
  } catch (err) {
    if (err instanceof APIError && (err.body as { code?: unknown } | undefined)?.code === PROBLEM_CODES.CLIENT_LIMIT_REACHED.code) {
      throw problem(PROBLEM_CODES.CLIENT_LIMIT_REACHED, { detail: err.message });
    }
    throw err;
  }
}

export async function createHostClient(c: Context<HostClientEnv, typeof HOST_CLIENT_PATH>) {
  const userId = c.var.session.user.id;
  const host = await findOwnedHostKey(c.var.deps.db, userId, c.req.param("id"));
  if (!host) throw problems.notFound("You have no agent host with that id.");
  if (host.status !== "active") throw problem(PROBLEM_CODES.INVALID_STATE, { detail: "Only an active host can be an OAuth client." });
  const jwks = hostKeySet(host.publicKey);
  if (!jwks) throw problem(PROBLEM_CODES.INVALID_STATE, { detail: "This host has no enrolled key private_key_jwt can verify (an Ed25519, P-256 or RSA public JWK)." });

  const existing = (await hostClientIds(c, userId, host.id))[0];
  if (existing) return c.json(hostClientAnswer(existing, host.id), 200);

  const clientId = await createOwnedClient(c, host.name, jwks);
  const { adapter } = await c.var.deps.auth.$context;
  await updateClientRow(adapter, clientId, { metadata: { [HOST_CLIENT_METADATA_KEY]: host.id }, clientCredentialsScopes: [...MACHINE_SCOPE_LIST] });
  // Two requests at once may each have created one: keep the first id, delete the others.
  const [kept, ...extra] = await hostClientIds(c, userId, host.id);
  for (const id of extra) await deleteClientRow(adapter, id);
  return c.json(hostClientAnswer(kept ?? clientId, host.id), kept === clientId ? 201 : 200);
}

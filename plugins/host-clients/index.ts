import type { BetterAuthPlugin } from "better-auth";
import { APIError, createAuthMiddleware } from "better-auth/api";
import { decodeJwt } from "jose";
import { assertionHints, carriesClientAssertion } from "../client-keys/index.js";
import { hookOn } from "../hooks.js";
import { findClientRow, listOwnedClientsByAuthMethod, updateClientRow } from "../oauth-store/adapter.js";
import { HOST_CLIENT_METADATA_KEY, hostIdOfClient, hostKeySet } from "./host-key.js";

/**
 * An enrolled agent host authenticates as its own OAuth client with an assertion signed by its
 * host key (RFC 7523 §2.2), no secret (routes/agents/host-client.ts creates the client).
 *
 * The host's record decides, at every client authentication (token, introspection,
 * revocation): before oauth-provider verifies the assertion, the host's current enrolled key
 * is written as the client's `jwks` when it differs (a rotated host key works at once, and a
 * key set anyone put on the client some other way is replaced), and a host that is revoked,
 * paused, deleted or keyless fails client authentication at once. oauth-provider then
 * verifies the signature, `aud`, lifetime and single-use `jti` as for any private_key_jwt
 * client. The assertion is only decoded here to find the client: refusing on it grants
 * nothing, and the key written is the host's, whatever the assertion says. A host moved to
 * another account (agent-auth's /host/switch-account) is no longer the old owner's client.
 *
 * agent-auth's /host/rotate-key renames the host: its new id is the new key's JWK thumbprint
 * (RFC 7638). The client's link follows the rename; were it ever missed, the client would
 * name a host that no longer exists and fail closed.
 */

interface HostClientRow {
  clientId: string;
  userId?: string | null;
  jwks?: string | null;
  metadata?: unknown;
}
interface HostRow {
  id: string;
  status: string;
  userId?: string | null;
  publicKey?: string | null;
}

/** RFC 6749 §5.2: invalid_client, 400 when no Authorization header was tried; generic, as for any failed client authentication. */
function invalidClient(): never {
  throw new APIError("BAD_REQUEST", { error: "invalid_client", error_description: "client authentication failed" });
}

export function hostClients(): BetterAuthPlugin {
  const keepInStep = {
    matcher: carriesClientAssertion,
    handler: createAuthMiddleware(async (ctx) => {
      const hints = assertionHints((ctx.body as { client_assertion: string }).client_assertion);
      if (!hints || hints.clientId.length > 255) return; // oauth-provider answers a malformed assertion
      const client = await findClientRow<HostClientRow>(ctx.context.adapter, hints.clientId);
      const hostId = client ? hostIdOfClient(client.metadata) : null;
      if (!client || !hostId) return;
      const host = await ctx.context.adapter.findOne<HostRow>({ model: "agentHost", where: [{ field: "id", value: hostId }] });
      const keys = host?.status === "active" && host.userId === client.userId ? hostKeySet(host.publicKey) : null;
      if (!keys) invalidClient();
      const jwks = JSON.stringify(keys);
      if (jwks !== client.jwks) await updateClientRow(ctx.context.adapter, client.clientId, { jwks });
    }),
  };
  const followRename = hookOn(
    "/host/rotate-key",
    createAuthMiddleware(async (ctx) => {
      const returned = ctx.context.returned as { host_id?: unknown } | undefined;
      if (!returned || returned instanceof Response || typeof returned.host_id !== "string") return;
      // The endpoint succeeded, so it verified this host JWT: its issuer is the old id.
      const bearer = /^Bearer\s+(\S+)$/i.exec(ctx.headers?.get("authorization") ?? "")?.[1];
      const oldId = bearer ? decodeJwt(bearer).iss : undefined;
      const newId = returned.host_id;
      if (!oldId || oldId === newId) return;
      const host = await ctx.context.adapter.findOne<HostRow>({ model: "agentHost", where: [{ field: "id", value: newId }] });
      if (!host?.userId) return;
      const owned = await listOwnedClientsByAuthMethod<HostClientRow>(ctx.context.adapter, host.userId, "private_key_jwt");
      for (const client of owned.filter((c) => hostIdOfClient(c.metadata) === oldId)) {
        await updateClientRow(ctx.context.adapter, client.clientId, { metadata: { [HOST_CLIENT_METADATA_KEY]: newId } });
      }
    }),
  );
  return { id: "host-clients", hooks: { before: [keepInStep], after: [followRename] } };
}

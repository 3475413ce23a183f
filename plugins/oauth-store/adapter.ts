import type { AuthContext } from "better-auth";

/**
 * oauth-provider's tables as our plugins' hooks and endpoints read and change them inside a
 * better-auth request: through that request's adapter (`ctx.context.adapter`), so they share
 * its transaction and read rows as oauth-provider does (lists parsed, booleans and dates
 * decoded). Outside a request, clients.ts and grants.ts do the same over Kysely.
 */

type Adapter = AuthContext["adapter"];

const byClientId = (clientId: string) => [{ field: "clientId", value: clientId }];

/** A registered client's row (the fields the caller reads), or null. */
export function findClientRow<T extends object>(adapter: Pick<Adapter, "findOne">, clientId: string): Promise<T | null> {
  return adapter.findOne<T>({ model: "oauthClient", where: byClientId(clientId) });
}

/** Changes a registered client's fields; the row as changed, or null when there is none. */
export function updateClientRow<T extends object>(adapter: Pick<Adapter, "update">, clientId: string, update: Record<string, unknown>): Promise<T | null> {
  return adapter.update<T>({ model: "oauthClient", where: byClientId(clientId), update });
}

/** Deletes a registered client; its tokens and consents go with it (foreign keys, on delete cascade). */
export function deleteClientRow(adapter: Pick<Adapter, "delete">, clientId: string): Promise<void> {
  return adapter.delete({ model: "oauthClient", where: byClientId(clientId) });
}

/** How many clients a person owns. */
export function countOwnedClients(adapter: Pick<Adapter, "count">, userId: string): Promise<number> {
  return adapter.count({ model: "oauthClient", where: [{ field: "userId", value: userId }] });
}

/** What an access token (by its stored hash) was issued for that its JWT form would carry: the selected identity. */
export function findAccessTokenReference(adapter: Pick<Adapter, "findOne">, tokenHash: string): Promise<{ referenceId?: string | null } | null> {
  return adapter.findOne<{ referenceId?: string | null }>({ model: "oauthAccessToken", where: [{ field: "token", value: tokenHash }] });
}

/** The resources a refresh token (by its stored hash) was granted for, as stored; null when there is no such token. */
export async function findRefreshTokenResources(adapter: Pick<Adapter, "findOne">, tokenHash: string): Promise<{ resources?: unknown } | null> {
  return adapter.findOne<{ resources?: unknown }>({ model: "oauthRefreshToken", where: [{ field: "token", value: tokenHash }] });
}

/** An RFC 8707 resource an admin configured (oauth-provider's `oauthResource`), by its identifier; null when none. */
export function findResourceRow<T extends object>(adapter: Pick<Adapter, "findOne">, identifier: string): Promise<T | null> {
  return adapter.findOne<T>({ model: "oauthResource", where: [{ field: "identifier", value: identifier }] });
}

/** Whose grant a refresh token (by its stored hash) belongs to, and whether it is revoked; null when there is no such token. */
export function findRefreshTokenGrant(adapter: Pick<Adapter, "findOne">, tokenHash: string): Promise<{ userId: string; clientId: string; revoked?: Date | null } | null> {
  return adapter.findOne<{ userId: string; clientId: string; revoked?: Date | null }>({ model: "oauthRefreshToken", where: [{ field: "token", value: tokenHash }] });
}

/** The clients a person owns that authenticate with `method`, with their metadata (a person owns few: their tier bounds it). */
export function listOwnedClientsByAuthMethod<T extends object>(adapter: Pick<Adapter, "findMany">, userId: string, method: string): Promise<T[]> {
  return adapter.findMany<T>({ model: "oauthClient", where: [{ field: "userId", value: userId }, { field: "tokenEndpointAuthMethod", value: method }] });
}

/**
 * Marks a single-use assertion's key (a hash of its issuer and `jti`) used until `expiresAt`,
 * in oauth-provider's `oauthClientAssertion` tombstones: one insert wins on every instance.
 * False when the key was already used; a failure that left no row is rethrown.
 */
export async function consumeAssertionKey(adapter: Pick<Adapter, "create" | "findOne">, id: string, expiresAt: Date): Promise<boolean> {
  try {
    await adapter.create({ model: "oauthClientAssertion", data: { id, expiresAt }, forceAllowId: true });
    return true;
  } catch (err) {
    const used = await adapter.findOne({ model: "oauthClientAssertion", where: [{ field: "id", value: id }] }).catch(() => null);
    if (used) return false;
    throw err;
  }
}

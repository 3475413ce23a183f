import type { AuthContext } from "better-auth";

/**
 * better-auth's `session`, `account` and `passkey` tables as our plugins' hooks and endpoints
 * read and change them inside a better-auth request: through that request's adapter
 * (`ctx.context.adapter`), so they share its transaction and read rows as better-auth does.
 * Outside a request, sessions.ts, accounts.ts and passkeys.ts do the same over Kysely.
 */

type Adapter = AuthContext["adapter"];

const byUser = (userId: string) => [{ field: "userId", value: userId }];

/** A session's row (the fields the caller reads) by its id, or null. */
export function findSessionRow<T extends object>(adapter: Pick<Adapter, "findOne">, sessionId: string): Promise<T | null> {
  return adapter.findOne<T>({ model: "session", where: [{ field: "id", value: sessionId }] });
}

/** A person's accounts (password and linked providers), the fields the caller reads. */
export function findAccountRows<T extends object>(adapter: Pick<Adapter, "findMany">, userId: string): Promise<T[]> {
  return adapter.findMany<T>({ model: "account", where: byUser(userId) });
}

/** A passkey's row (the fields the caller reads) by its id, or null. */
export function findPasskeyRow<T extends object>(adapter: Pick<Adapter, "findOne">, passkeyId: string): Promise<T | null> {
  return adapter.findOne<T>({ model: "passkey", where: [{ field: "id", value: passkeyId }] });
}

/** How many passkeys a person has. */
export function countPasskeys(adapter: Pick<Adapter, "count">, userId: string): Promise<number> {
  return adapter.count({ model: "passkey", where: byUser(userId) });
}

/** Deletes every passkey of a person. */
export function deletePasskeys(adapter: Pick<Adapter, "deleteMany">, userId: string): Promise<number> {
  return adapter.deleteMany({ model: "passkey", where: byUser(userId) });
}

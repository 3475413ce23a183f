import type { BetterAuthPlugin } from "better-auth";
import type { Kysely } from "kysely";
import { UniqueViolation } from "../../lib/errors.js";
import type { Database } from "../../lib/db/tables.js";

/** The SQLSTATE a failed insert of a spent key raised, which the raised UniqueViolation carries. */
const UNIQUE_VIOLATION = "23505";

/**
 * A single-use assertion's key (oauth-provider's `oauthClientAssertion` tombstone: a
 * private_key_jwt `jti`, an ID-JAG's) is spent by inserting it, and a second use is told by the
 * insert failing on the key (oauth-provider's client authentication; ./adapter.ts
 * consumeAssertionKey). Inside a transaction (the token endpoint's grants, lib/atomic-refresh.ts)
 * a failed statement ends the transaction on PostgreSQL, and a unit of work with a failed
 * statement answers that failure (lib/db/unit-of-work.ts): a replayed assertion answered a 409
 * instead of `invalid_client`.
 *
 * So the tombstone is inserted with `on conflict do nothing`, a statement that does not fail,
 * and a key already spent raises the same UniqueViolation the failed insert raised, from here:
 * the callers' handling is unchanged, and the transaction goes on.
 */
export function insertAssertionKeysQuietly(adapter: { create: (query: { model: string; data: Record<string, unknown> }) => Promise<unknown> }, db: Kysely<Database>): void {
  const create = adapter.create.bind(adapter);
  adapter.create = async (query) => {
    if (query?.model !== "oauthClientAssertion") return create(query);
    const { id, expiresAt } = query.data as { id?: unknown; expiresAt?: unknown };
    if (typeof id !== "string" || !(expiresAt instanceof Date)) return create(query);
    const result = await db
      .insertInto("oauthClientAssertion")
      .values({ id, expiresAt })
      .onConflict((conflict) => conflict.column("id").doNothing())
      .executeTakeFirst();
    if (Number(result.numInsertedOrUpdatedRows ?? 0) !== 1) throw new UniqueViolation({ code: UNIQUE_VIOLATION });
    return { id, expiresAt };
  };
}

/** The plugin that applies insertAssertionKeysQuietly to better-auth's adapter at start-up. */
export function assertionKeysInsertedQuietly(db: Kysely<Database>) {
  return {
    id: "assertion-keys-inserted-quietly",
    init(ctx) {
      insertAssertionKeysQuietly(ctx.adapter as unknown as Parameters<typeof insertAssertionKeysQuietly>[0], db);
    },
  } satisfies BetterAuthPlugin;
}

import { CompiledQuery } from "kysely";
import type { DatabaseHandle } from "../../lib/db/connection.js";
import { columnsOf, gathered } from "../../lib/db/gather.js";

/**
 * The refresh grant's rotation on PostgreSQL (plugins/oauth-store/refresh.ts), one statement
 * each: the compare and set, then each insert fed by the rows before it, so nothing is inserted
 * unless the presented token was still unrevoked. A concurrent second use waits on the row's
 * lock, then finds it revoked and inserts nothing.
 *
 * The values of one rotation, in this order (the single statement's $1..$16):
 * issuedAt, previousId, refresh id, refresh hash, clientId, sessionId, userId, referenceId,
 * authorizationCodeId, requestedUserInfoClaims (JSON), scopes (JSON), authTime, refresh expiry,
 * access id, access hash, access expiry.
 */
export type RotationValues = readonly unknown[];

/** The PostgreSQL types of a rotation's values, in order. */
export const ROTATE_TYPES = ["timestamptz", "text", "text", "text", "text", "text", "text", "text", "text", "jsonb", "jsonb", "timestamptz", "timestamptz", "text", "text", "timestamptz"] as const;
const PREVIOUS_ID = 1;

const COMMON = `"clientId", "sessionId", "userId", "referenceId", "authorizationCodeId", "requestedUserInfoClaims", "scopes", "createdAt"`;
const COMMON_VALUES = `$5::text, $6::text, $7::text, $8::text, $9::text, $10::jsonb, $11::jsonb, $1::timestamptz`;

/** One rotation: the final insert's row count is 1 when it rotated, 0 when the token was already revoked. */
export const ROTATE_ONE = `with "revoked" as (
  update "oauthRefreshToken" set "revoked" = $1::timestamptz, "rotatedAt" = $1::timestamptz where "id" = $2::text and "revoked" is null returning "id"
), "refresh" as (
  insert into "oauthRefreshToken" ("id", "token", ${COMMON}, "authTime", "expiresAt")
  select $3::text, $4::text, ${COMMON_VALUES}, $12::timestamptz, $13::timestamptz from "revoked" returning "id"
)
insert into "oauthAccessToken" ("id", "token", ${COMMON}, "refreshId", "expiresAt")
select $14::text, $15::text, ${COMMON_VALUES}, "refresh"."id", $16::timestamptz from "refresh"`;

/**
 * `count` rotations (distinct presented tokens) in one statement: their values as arrays, one
 * per column; answers the positions (from 1) of those that rotated. Each presented row is
 * revoked by an update of its own, `"id" = ($2)[k]`, planned as the single statement's is (its
 * primary key): an update joined to the whole batch was planned as a scan of the table while it
 * had no statistics, and a prepared statement keeps that plan (tests/ops/token-plans.test.ts).
 * The inserts read only the statement's own rows.
 */
const I = (n: number) => `"i"."__p${n}"`;
const COMMON_BATCH = `${I(5)}, ${I(6)}, ${I(7)}, ${I(8)}, ${I(9)}, ${I(10)}, ${I(11)}, ${I(1)}`;
export function rotateManySql(count: number): string {
  const each = Array.from({ length: count }, (_, k) => `"revoked${k + 1}" as (
  update "oauthRefreshToken" set "revoked" = ($1::timestamptz[])[${k + 1}], "rotatedAt" = ($1::timestamptz[])[${k + 1}] where "id" = ($2::text[])[${k + 1}] and "revoked" is null returning "id"
)`);
  return `with "i" as (
  select * from unnest(${ROTATE_TYPES.map((type, n) => `$${n + 1}::${type}[]`).join(", ")}) with ordinality as "i"(${ROTATE_TYPES.map((_, n) => `"__p${n + 1}"`).join(", ")}, "__ord")
), ${each.join(", ")}, "revoked" as (
  ${each.map((_, k) => `select "id" from "revoked${k + 1}"`).join(" union all ")}
), "refresh" as (
  insert into "oauthRefreshToken" ("id", "token", ${COMMON}, "authTime", "expiresAt")
  select ${I(3)}, ${I(4)}, ${COMMON_BATCH}, ${I(12)}, ${I(13)} from "i" where ${I(2)} in (select "id" from "revoked") returning "id"
), "access" as (
  insert into "oauthAccessToken" ("id", "token", ${COMMON}, "refreshId", "expiresAt")
  select ${I(14)}, ${I(15)}, ${COMMON_BATCH}, ${I(3)}, ${I(16)} from "i" where ${I(3)} in (select "id" from "refresh") returning "refreshId"
)
select "i"."__ord" as "ord" from "i" where ${I(3)} in (select "refreshId" from "access")`;
}

/** The most rotations in one statement (one prepared text per count, up to this). */
const MAX_BATCH = 16;
const manySql = Array.from({ length: MAX_BATCH + 1 }, (_, count) => (count > 1 ? rotateManySql(count) : ""));

/**
 * `rotate(values)`: true when the presented token was rotated. On PostgreSQL with prepared
 * statements, the rotations of one turn of the event loop go as one statement (lib/db/gather.ts):
 * one round trip and one commit for all of them. Two in one batch presenting the same token:
 * only the first goes in, the others answer false (used meanwhile), as they would have after it.
 */
export function postgresRotator(database: Pick<DatabaseHandle, "db" | "queryPrepared">): (values: RotationValues) => Promise<boolean> {
  const { queryPrepared, db } = database;
  if (!queryPrepared) return async (values) => Number((await db.executeQuery(CompiledQuery.raw(ROTATE_ONE, [...values]))).numAffectedRows) === 1;
  const one = async (values: RotationValues) => (await queryPrepared("idp_refresh_rotate", ROTATE_ONE, values)).rowCount === 1;
  return gathered<RotationValues, boolean>({
    one,
    async all(batch) {
      const first = new Map<unknown, number>();
      batch.forEach((values, at) => {
        if (!first.has(values[PREVIOUS_ID])) first.set(values[PREVIOUS_ID], at);
      });
      const sent = [...first.values()];
      if (sent.length === 1) {
        const rotated = await one(batch[sent[0]!]!);
        return batch.map((_, at) => rotated && at === sent[0]);
      }
      const { rows } = await queryPrepared(`idp_refresh_rotate_${sent.length}`, manySql[sent.length]!, columnsOf(sent.map((at) => batch[at]!), ROTATE_TYPES.length));
      const rotated = new Set(rows.map((row) => sent[Number(row.ord) - 1]));
      return batch.map((_, at) => rotated.has(at));
    },
    max: MAX_BATCH,
  });
}

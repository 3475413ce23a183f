import { preparedRowReader, preparedRowsReader, type Awaitable, type DatabaseHandle } from "./connection.js";

/**
 * Work gathered per turn of the event loop (PostgreSQL's counterpart of SQLite's group commit,
 * DatabaseHandle.transactSoon): every item queued in one turn runs as one statement at the end
 * of it, so N concurrent requests cost one round trip, one statement's overhead on each side
 * and, for a write, one commit, instead of N of each. The fast lanes' requests arrive in such
 * bursts: the rate limiter's Redis answers come back in one read, and each request's next query
 * is then queued in the same turn.
 *
 * `one` runs an item alone (the batch of one, the common case at low load); `all` runs several
 * in one statement and answers in their order. When `all` fails, nothing of it stayed (it is one
 * statement) and each item runs again alone, so a bad item fails only its own caller.
 */
export interface GatherSteps<I, O> {
  one(item: I): Promise<O>;
  all(items: readonly I[]): Promise<O[]>;
  /** The most items in one statement (the rest go in the next); default 64. */
  max?: number;
}

export function gathered<I, O>({ one, all, max = 64 }: GatherSteps<I, O>): (item: I) => Promise<O> {
  type Queued = { item: I; ok: (value: O) => void; fail: (err: unknown) => void };
  let queue: Queued[] | null = null;

  const alone = ({ item, ok, fail }: Queued) => one(item).then(ok, fail);

  async function run(batch: Queued[]) {
    if (batch.length === 1) return alone(batch[0]!);
    let answers: O[];
    try {
      answers = await all(batch.map((q) => q.item));
      if (answers.length !== batch.length) throw new Error(`gathered: ${answers.length} answers for ${batch.length} items`);
    } catch {
      await Promise.all(batch.map(alone));
      return;
    }
    for (let i = 0; i < batch.length; i++) batch[i]!.ok(answers[i]!);
  }

  function flush() {
    const queued = queue!;
    queue = null;
    for (let start = 0; start < queued.length; start += max) void run(queued.slice(start, start + max));
  }

  return (item) =>
    new Promise<O>((ok, fail) => {
      if (!queue) {
        queue = [];
        setImmediate(flush);
      }
      queue.push({ item, ok, fail });
    });
}

/**
 * A PostgreSQL read that finds at most one row per parameter list, as one statement for many
 * lists: `sql` runs once per row of `unnest($1::type[], ...) with ordinality`, as a lateral
 * subquery whose `$n` are that row's columns, and each row it finds carries its list's position
 * (`__ord`, from 1). `types` are the parameters' PostgreSQL types. The subquery's `limit 1`
 * keeps PostgreSQL from flattening it into one join of the whole batch: it is planned as `sql`
 * alone is, an index lookup per list, not the hash joins over whole tables that a join of the
 * batch gets on tables without statistics (tests/ops/token-plans.test.ts).
 */
export function batchedReadSql(sql: string, types: readonly string[]): string {
  return batchedSql(sql, types, "limit 1");
}

/**
 * batchedReadSql for a read that finds any number of rows per parameter list: every row each
 * list finds, with its `__ord`. `offset 0` is the fence that keeps the subquery from being
 * flattened into a join of the batch (PostgreSQL does not pull up a subquery with an OFFSET).
 */
export function batchedRowsSql(sql: string, types: readonly string[]): string {
  return batchedSql(sql, types, "offset 0");
}

function batchedSql(sql: string, types: readonly string[], fence: string): string {
  if (!/^select /.test(sql)) throw new Error("batchedSql: not a select statement");
  const columns = types.map((_, i) => `"__p${i + 1}"`).join(", ");
  const arrays = types.map((type, i) => `$${i + 1}::${type}[]`).join(", ");
  const each = sql.replace(/\$(\d+)\b/g, (_, n: string) => `"__batch"."__p${n}"`);
  return `select "__batch"."__ord" as "__ord", "__row".* from unnest(${arrays}) with ordinality as "__batch"(${columns}, "__ord") cross join lateral (${each} ${fence}) as "__row"`;
}

/** The rows of a batched read (batchedReadSql) in the order of its parameter lists; undefined where a list found none. */
export function rowsByOrdinal(rows: readonly Record<string, unknown>[], count: number): (Record<string, unknown> | undefined)[] {
  const answers: (Record<string, unknown> | undefined)[] = new Array(count).fill(undefined);
  for (const row of rows) {
    const at = Number(row.__ord) - 1;
    if (at >= 0 && at < count && answers[at] === undefined) answers[at] = row;
  }
  return answers;
}

/** The rows of a batched read of many rows per list (batchedRowsSql), grouped by list in the lists' order. */
export function rowsGroupedByOrdinal(rows: readonly Record<string, unknown>[], count: number): Record<string, unknown>[][] {
  const answers: Record<string, unknown>[][] = Array.from({ length: count }, () => []);
  for (const row of rows) {
    const at = Number(row.__ord) - 1;
    if (at >= 0 && at < count) answers[at]!.push(row);
  }
  return answers;
}

/** Parameter lists as the columns unnest reads: the i-th array holds every list's i-th value. */
export function columnsOf(lists: readonly (readonly unknown[])[], width: number): unknown[][] {
  const columns: unknown[][] = Array.from({ length: width }, () => []);
  for (const list of lists) for (let i = 0; i < width; i++) columns[i]!.push(list[i] ?? null);
  return columns;
}

/**
 * preparedRowReader, gathered on PostgreSQL: the reads queued in one turn of the event loop go
 * to the server as one statement (batchedReadSql of `sql`, prepared as `name`_batch). SQLite
 * still reads at once. `types`: the PostgreSQL types of `sql`'s parameters.
 */
export function gatheredRowReader(database: Pick<DatabaseHandle, "db" | "readRowNow" | "queryPrepared">, name: string, sql: string, types: readonly string[]): (parameters: readonly unknown[]) => Awaitable<Record<string, unknown> | undefined> {
  const { queryPrepared } = database;
  if (database.readRowNow || !queryPrepared) return preparedRowReader(database, name, sql);
  return gatheredPrepared(queryPrepared, name, sql, types, batchedReadSql(sql, types), (rows) => rows[0], rowsByOrdinal);
}

/** preparedRowsReader, gathered on PostgreSQL as gatheredRowReader is (batchedRowsSql); SQLite still reads at once. */
export function gatheredRowsReader(database: Pick<DatabaseHandle, "db" | "readRowsNow" | "queryPrepared">, name: string, sql: string, types: readonly string[]): (parameters: readonly unknown[]) => Awaitable<Record<string, unknown>[]> {
  const { queryPrepared } = database;
  if (database.readRowsNow || !queryPrepared) return preparedRowsReader(database, name, sql);
  return gatheredPrepared(queryPrepared, name, sql, types, batchedRowsSql(sql, types), (rows) => rows, rowsGroupedByOrdinal);
}

type Rows = Record<string, unknown>[];

/** The gathered read of `sql` alone (prepared as `name`, its answer `alone` of its rows) or batched (`batchSql`, each list's answer by `byList`). */
function gatheredPrepared<O>(
  queryPrepared: NonNullable<DatabaseHandle["queryPrepared"]>,
  name: string,
  sql: string,
  types: readonly string[],
  batchSql: string,
  alone: (rows: Rows) => O,
  byList: (rows: Rows, count: number) => O[],
): (parameters: readonly unknown[]) => Promise<O> {
  return gathered<readonly unknown[], O>({
    one: async (parameters) => alone((await queryPrepared(name, sql, parameters)).rows),
    all: async (lists) => byList((await queryPrepared(`${name}_batch`, batchSql, columnsOf(lists, types.length))).rows, lists.length),
  });
}

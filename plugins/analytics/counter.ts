/**
 * Per-client analytics counted in this process's memory (./flush.ts writes them out every few
 * seconds and at shutdown). Counting is a Map update: the token endpoint and the authorization
 * steps pay no query and no await for it. Keys are bounded: a metric is one of ours, a key is
 * a grant type or an RFC 6749 error code of a short, plain shape, and the batch holds at most
 * `maxEntries` keys between two flushes (more are dropped and counted as such, so a flood of
 * made-up client_ids cannot grow memory). Client ids that name no client are dropped at flush.
 */
export const ANALYTICS_METRICS = ["authorization", "token", "refusal"] as const;
export type AnalyticsMetric = (typeof ANALYTICS_METRICS)[number];

/** One day's counts of one client: `count` rows and the set of people. */
export interface AnalyticsBatch {
  /** `day|clientId|metric|key` -> count. */
  counts: Map<string, number>;
  /** `day|clientId|userId`. */
  people: Set<string>;
}

export const SEPARATOR = "|";
const PLAIN_KEY = /^[A-Za-z0-9_.:-]{0,100}$/;
const CLIENT_ID = /^[\x21-\x7e]{1,255}$/;

/** The UTC day of `at`, `YYYY-MM-DD`. */
export function utcDay(at: Date = new Date()): string {
  return at.toISOString().slice(0, 10);
}

export type AnalyticsCounter = ReturnType<typeof createAnalyticsCounter>;

export function createAnalyticsCounter({ maxEntries = 50_000, now = () => new Date() }: { maxEntries?: number; now?: () => Date } = {}) {
  let batch: AnalyticsBatch = { counts: new Map(), people: new Set() };
  let dropped = 0;
  const full = () => batch.counts.size + batch.people.size >= maxEntries;
  // A client_id is part of the row's id: `|` would make two keys meet.
  const usable = (clientId: string) => CLIENT_ID.test(clientId) && !clientId.includes(SEPARATOR);

  function count(clientId: string, metric: AnalyticsMetric, key = "", by = 1) {
    if (!usable(clientId) || !PLAIN_KEY.test(key)) return;
    const id = [utcDay(now()), clientId, metric, key].join(SEPARATOR);
    const before = batch.counts.get(id);
    if (before === undefined && full()) {
      dropped += by;
      return;
    }
    batch.counts.set(id, (before ?? 0) + by);
  }

  return {
    count,
    /** A person signed in to the client (an authorization code issued for them): counted once a day. */
    signedIn(clientId: string, userId: string) {
      if (!usable(clientId) || !userId || userId.length > 255) return;
      const id = [utcDay(now()), clientId, userId].join(SEPARATOR);
      if (batch.people.has(id)) return;
      if (full()) {
        dropped += 1;
        return;
      }
      batch.people.add(id);
    },
    /** Takes what was counted since the last take (the flush writes it); counting goes on in a new batch. */
    take(): { batch: AnalyticsBatch; dropped: number } {
      const taken = { batch, dropped };
      batch = { counts: new Map(), people: new Set() };
      dropped = 0;
      return taken;
    },
    /** A batch whose write failed comes back, to be written with the next one. */
    restore(failed: AnalyticsBatch) {
      for (const [id, n] of failed.counts) {
        const before = batch.counts.get(id);
        if (before === undefined && full()) dropped += n;
        else batch.counts.set(id, (before ?? 0) + n);
      }
      for (const id of failed.people) if (!batch.people.has(id) && !full()) batch.people.add(id);
    },
    get size() {
      return batch.counts.size + batch.people.size;
    },
  };
}

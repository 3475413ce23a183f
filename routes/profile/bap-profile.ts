import { Hono, type Context } from "hono";
import type { Kysely } from "kysely";
import * as v from "valibot";
import { problem, problems } from "../../lib/errors.js";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";
import { parseJsonOrNull } from "../../lib/json.js";
import { readJson, readQuery } from "../../lib/validate.js";
import * as publications from "../../plugins/bap-identity/publications.js";
import * as identities from "../../plugins/bap-identity/store.js";
import { maybeSignedIn, signedIn } from "../middleware.js";
import { BapId, ByBapId, Pubkey, publicRecord, writeQuota, type ProfileEnv } from "./shared.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * /api/bap/profile: a registered identity's public profile, the owner's session-scoped draft
 * (saving signs and broadcasts nothing) and publications (we record a txid the owner broadcast).
 */
/** A profile document: a JSON object of bounded size (checked on the raw body). */
const ProfileDoc = v.record(v.string(), v.unknown());
export const SaveDraft = v.strictObject({ bapId: BapId, profile: ProfileDoc });
export const Publish = v.strictObject({
  bapId: BapId,
  txid: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex characters")),
  profile: v.pipe(ProfileDoc, v.check((p) => p.identity !== undefined && p.identity !== null, "must include identity")),
  kind: v.optional(v.pipe(v.string(), v.maxLength(64))),
  fundedBy: v.optional(v.pipe(v.string(), v.maxLength(128))),
});
export const ByBapIdOrPubkey = v.pipe(
  v.object({ bapId: v.optional(BapId), pubkey: v.optional(Pubkey) }),
  v.check((q) => Boolean(q.bapId) !== Boolean(q.pubkey), "give exactly one of bapId or pubkey"),
);

type Ctx = Context<ProfileEnv>;

/** The signed-in user's identity `bapId`; someone else's answers like a missing one: no probing who owns what. */
async function requireOwned(db: Kysely<Database>, userId: string, bapId: string): Promise<identities.BapIdentity> {
  const row = await identities.findIdentity(db, bapId);
  if (!row || row.userId !== userId) throw problems.notFound("You have no BAP identity with that bapId.");
  return row;
}

/** The public profile and its latest publication; the owner also sees their unpublished draft, marked as such. */
async function getProfile(c: Ctx) {
  const { db } = c.var.deps;
  const query = readQuery(c, ByBapIdOrPubkey);
  const row = query.bapId ? await identities.findIdentity(db, query.bapId) : ((await identities.listIdentitiesOfMemberKey(db, query.pubkey!))[0] ?? null);
  if (!row) throw problems.notFound("No BAP profile is registered for that key.");
  const result: Record<string, unknown> = { ...publicRecord(row), published: false };
  const publication = await publications.findLatestPublication(db, row.bapId);
  if (publication) Object.assign(result, { published: true, txid: publication.txid, publishedAt: publication.createdAt.toISOString() });
  const draft = c.var.session?.user.id === row.userId ? await publications.findDraft(db, row.bapId) : null;
  if (draft) Object.assign(result, { draft: { profile: parseJsonOrNull(draft.profile), updatedAt: draft.updatedAt.toISOString() }, unpublished: true });
  return c.json({ status: "OK", result });
}

async function saveDraft(c: Ctx) {
  const { db } = c.var.deps;
  const { user } = c.var.session;
  const { value: body } = await readJson(c, SaveDraft, 64 * 1024);
  await requireOwned(db, user.id, body.bapId);
  await publications.saveDraft(db, user.id, body.bapId, JSON.stringify(body.profile));
  return c.json({ status: "OK", result: { bapId: body.bapId, profile: body.profile, draft: true, unpublished: true } });
}

async function deleteDraft(c: Ctx) {
  const { db } = c.var.deps;
  const { user } = c.var.session;
  const { bapId } = readQuery(c, ByBapId);
  await requireOwned(db, user.id, bapId);
  if (!(await publications.deleteDraft(db, user.id, bapId))) throw problems.notFound("There is no draft for that identity.");
  return c.json({ status: "OK" });
}

async function recordPublication(c: Ctx) {
  const { db } = c.var.deps;
  const { user } = c.var.session;
  const { value: body } = await readJson(c, Publish, 64 * 1024);
  await requireOwned(db, user.id, body.bapId);
  const now = new Date();
  const { bapId, txid, profile } = body;
  const kind = body.kind ?? null;
  const fundedBy = body.fundedBy ?? null;
  const input = { bapId, txid, profile: JSON.stringify(profile), identity: JSON.stringify(profile.identity), kind, fundedBy };
  if ((await publications.recordPublication(db, user.id, input, now)) === "txid-taken") throw problem(PROBLEM_CODES.TXID_ALREADY_RECORDED);
  return c.json({ status: "OK", result: { bapId, txid, profile, kind, fundedBy, publishedAt: now.toISOString() } }, 201);
}

async function getPublication(c: Ctx) {
  const { bapId } = readQuery(c, ByBapId);
  const row = await publications.findLatestPublication(c.var.deps.db, bapId);
  if (!row) throw problems.notFound("No publication is recorded for that identity.");
  return c.json({ status: "OK", result: { bapId, txid: row.txid, profile: parseJsonOrNull(row.profile), kind: row.kind, fundedBy: row.fundedBy, publishedAt: row.createdAt.toISOString() } });
}

/** Mounted at /api/bap. */
export const bapProfileRoutes = new Hono<ProfileEnv>()
  .get("/profile", maybeSignedIn, getProfile)
  .post("/profile", signedIn, writeQuota, saveDraft)
  .delete("/profile", signedIn, writeQuota, deleteDraft)
  .post("/profile/published", signedIn, writeQuota, recordPublication)
  .get("/profile/published", getPublication);

import { randomUUID } from "node:crypto";
import { Hono } from "hono";
import type { Kysely } from "kysely";
import * as v from "valibot";
import type { Auth } from "../auth.config.js";
import { addressOf, bapIdOfMemberKey, BAP_ID_PATTERN } from "../lib/bap.js";
import { isCompressedPubkey, verifyBitcoinAuthToken, type BitcoinAuthPolicy } from "../lib/bitcoin-auth.js";
import type { WindowLimiter } from "../lib/rate-limit.js";
import { asDate } from "../lib/db.js";
import { problem, problems } from "../lib/errors.js";
import { PROBLEM_CODES } from "../lib/problem-codes.js";
import { parseJsonOrNull } from "../lib/json.js";
import { findSession, requireSession } from "./session.js";
import { readJson, readQuery } from "../lib/validate.js";
import { listRegistrations, registrationRecord } from "../plugins/bap-identity/registrations.js";
import * as identities from "../plugins/bap-identity/store.js";
import { SOCIAL_ERROR_CODES } from "../plugins/social/error-codes.js";

/**
 * BAP profiles (spec "Profile" table): the user's registered identities, session-scoped
 * drafts (saving signs and broadcasts nothing) and publications (we record a txid the
 * owner broadcast). Profile data is user-authored: nothing here is a verified e-mail.
 */
interface ProfileDeps {
  auth: Auth;
  db: Kysely<any>;
  bitcoinAuth: BitcoinAuthPolicy;
  /** Writes per signed-in user per window (PROFILE_WRITE_LIMIT in app.ts); null turns the limit off. */
  writeLimiter: WindowLimiter | null;
}

const BapId = v.pipe(v.string(), v.regex(BAP_ID_PATTERN, "must be a BAP identity key"));
const Pubkey = v.pipe(v.string(), v.check((s: string) => isCompressedPubkey(s), "must be a compressed secp256k1 public key in hex"));
const Txid = v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex characters"));
const Address = v.pipe(v.string(), v.regex(/^[1-9A-HJ-NP-Za-km-z]{25,35}$/, "must be a Bitcoin address"));
/** A profile document: a JSON object of bounded size (checked on the raw body). */
const ProfileDoc = v.record(v.string(), v.unknown());

const RegisterIdentity = v.strictObject({
  bapId: BapId,
  name: v.optional(v.pipe(v.string(), v.maxLength(200))),
  counter: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  isPrimary: v.optional(v.boolean()),
  accountPubkey: v.optional(Pubkey),
  currentAddress: v.optional(Address),
  profile: v.optional(ProfileDoc),
});
const SaveDraft = v.strictObject({ bapId: BapId, profile: ProfileDoc });
const Publish = v.strictObject({
  bapId: BapId,
  txid: Txid,
  profile: v.pipe(ProfileDoc, v.check((p) => p.identity !== undefined && p.identity !== null, "must include identity")),
  kind: v.optional(v.pipe(v.string(), v.maxLength(64))),
  fundedBy: v.optional(v.pipe(v.string(), v.maxLength(128))),
});
const ByBapId = v.object({ bapId: BapId });
const ByBapIdOrPubkey = v.pipe(
  v.object({ bapId: v.optional(BapId), pubkey: v.optional(Pubkey) }),
  v.check((q) => Boolean(q.bapId) !== Boolean(q.pubkey), "give exactly one of bapId or pubkey"),
);

/** What anyone may look up during login: no account link, no metadata. */
function publicRecord(row: identities.BapIdentity) {
  const { id, identity_key, root_address, current_address, identity } = registrationRecord(row);
  return { id, identity_key, root_address, current_address, identity };
}

const NO_STORE = { "cache-control": "no-store" };

export function profileRoutes({ auth, db, bitcoinAuth, writeLimiter }: ProfileDeps) {
  /**
   * The signed-in writer, within their quota: every write here is a database write a session
   * can repeat at will, so each user gets a fixed number a minute (OWASP ASVS 4.0 V11.1.4,
   * anti-automation), counted per user rather than per address so one account cannot spread
   * its writes over many addresses. RFC 6585 §4: 429 with Retry-After.
   */
  async function requireWriter(headers: Headers) {
    const session = await requireSession(auth, headers);
    if (writeLimiter) {
      const { allowed, retryAfter } = await writeLimiter.hit(session.user.id);
      if (!allowed) throw problems.tooManyRequests(retryAfter);
    }
    return session;
  }

  async function requireOwned(userId: string, bapId: string): Promise<identities.BapIdentity> {
    const row = await identities.findIdentity(db, bapId);
    // Someone else's identity answers like a missing one: no probing who owns what.
    if (!row || row.userId !== userId) throw problems.notFound("You have no BAP identity with that bapId.");
    return row;
  }

  const users = new Hono()
    .get("/bap-ids", async (c) => {
      const pubkey = c.req.query("pubkey");
      if (pubkey !== undefined) {
        // Public lookup used during login: which identities does this member key control?
        const { pubkey: key } = readQuery(c, v.object({ pubkey: Pubkey }));
        return c.json({ bapIds: (await identities.listIdentitiesOfMemberKey(db, key)).map(publicRecord) }, 200, NO_STORE);
      }
      const { user } = await requireSession(auth, c.req.raw.headers);
      return c.json({ bapIds: await listRegistrations(db, user.id) }, 200, NO_STORE);
    })
    .post("/bap-ids", async (c) => {
      const { user } = await requireWriter(c.req.raw.headers);
      const { value: body, raw } = await readJson(c, RegisterIdentity, 64 * 1024);
      // Registering an identity claims it: the member key must prove control (its address is
      // the root address the bapId derives from), or anyone could put another's bap_id in tokens.
      const proof = await verifyBitcoinAuthToken(c.req.header("x-auth-token"), { requestPath: "/api/user/bap-ids", body: raw }, bitcoinAuth);
      if (!proof.ok) throw problem(PROBLEM_CODES.INVALID_AUTH_TOKEN, { detail: "Sign this request with the identity's member key (header x-auth-token)." });
      if (bapIdOfMemberKey(proof.pubkey) !== body.bapId) throw problem(PROBLEM_CODES.NOT_MEMBER_KEY);

      const { profile, ...fields } = body;
      const result = await identities.registerIdentity(db, user.id, {
        ...fields,
        memberPubkey: proof.pubkey,
        rootAddress: addressOf(proof.pubkey),
        ...(profile?.identity !== undefined ? { identity: JSON.stringify(profile.identity) } : {}),
      });
      if (result === "taken") throw problem(PROBLEM_CODES.BAP_ID_TAKEN);
      const row = (await identities.findIdentity(db, body.bapId))!;
      return c.json({ bapId: registrationRecord(row) }, result === "created" ? 201 : 200, NO_STORE);
    })
    .post("/bap-ids/confirm", async (c) => {
      const { user } = await requireSession(auth, c.req.raw.headers);
      const { value: body } = await readJson(c, ByBapId, 1024);
      // Someone else's identity answers like a missing one (confirmBapIdentity reads only the caller's).
      if (!(await identities.confirmBapIdentity(db, user.id, body.bapId))) throw problems.notFound("You have no BAP identity with that bapId.");
      return c.json({ bapId: registrationRecord((await identities.findIdentity(db, body.bapId))!) }, 200, NO_STORE);
    })
    .delete("/bap-ids", async (c) => {
      const { user } = await requireSession(auth, c.req.raw.headers);
      const { bapId } = readQuery(c, ByBapId);
      const result = await identities.removeBapIdentity(db, auth.$context, user.id, bapId);
      if (result === "not-found") throw problems.notFound("You have no BAP identity with that bapId.");
      if (result === "last-sign-in-method") throw problem(PROBLEM_CODES.LAST_SIGN_IN_METHOD);
      return c.json({ status: "OK" }, 200, NO_STORE);
    });

  const bap = new Hono()
    .get("/profile", async (c) => {
      const query = readQuery(c, ByBapIdOrPubkey);
      const row = query.bapId ? await identities.findIdentity(db, query.bapId) : ((await identities.listIdentitiesOfMemberKey(db, query.pubkey!))[0] ?? null);
      if (!row) throw problems.notFound("No BAP profile is registered for that key.");
      const result: Record<string, unknown> = { ...publicRecord(row), published: false };
      const publication = await db.selectFrom("bapPublication").select(["txid", "createdAt"]).where("bapId", "=", row.bapId).orderBy("createdAt", "desc").executeTakeFirst();
      if (publication) Object.assign(result, { published: true, txid: publication.txid, publishedAt: asDate(publication.createdAt).toISOString() });
      // The owner also sees their unpublished draft, marked as such.
      const session = await findSession(auth, c.req.raw.headers);
      if (session && session.user.id === row.userId) {
        const draft = await db.selectFrom("bapProfileDraft").select(["profile", "updatedAt"]).where("bapId", "=", row.bapId).executeTakeFirst();
        if (draft) Object.assign(result, { draft: { profile: parseJsonOrNull(draft.profile), updatedAt: asDate(draft.updatedAt).toISOString() }, unpublished: true });
      }
      return c.json({ status: "OK", result }, 200, NO_STORE);
    })
    .post("/profile", async (c) => {
      const { user } = await requireWriter(c.req.raw.headers);
      const { value: body } = await readJson(c, SaveDraft, 64 * 1024);
      await requireOwned(user.id, body.bapId);
      const now = new Date();
      const profile = JSON.stringify(body.profile);
      await db
        .insertInto("bapProfileDraft")
        .values({ id: randomUUID(), bapId: body.bapId, userId: user.id, profile, createdAt: now, updatedAt: now })
        .onConflict((oc) => oc.column("bapId").doUpdateSet({ profile, updatedAt: now }))
        .execute();
      return c.json({ status: "OK", result: { bapId: body.bapId, profile: body.profile, draft: true, unpublished: true } }, 200, NO_STORE);
    })
    .delete("/profile", async (c) => {
      const { user } = await requireWriter(c.req.raw.headers);
      const { bapId } = readQuery(c, ByBapId);
      await requireOwned(user.id, bapId);
      const deleted = await db.deleteFrom("bapProfileDraft").where("bapId", "=", bapId).where("userId", "=", user.id).executeTakeFirst();
      if (!Number(deleted.numDeletedRows)) throw problems.notFound("There is no draft for that identity.");
      return c.json({ status: "OK" }, 200, NO_STORE);
    })
    .post("/profile/published", async (c) => {
      const { user } = await requireWriter(c.req.raw.headers);
      const { value: body } = await readJson(c, Publish, 64 * 1024);
      await requireOwned(user.id, body.bapId);
      const now = new Date();
      await db.transaction().execute(async (trx) => {
        const clash = await trx.selectFrom("bapPublication").select(["bapId"]).where("txid", "=", body.txid).executeTakeFirst();
        if (clash) throw problem(PROBLEM_CODES.TXID_ALREADY_RECORDED);
        await trx
          .insertInto("bapPublication")
          .values({ id: randomUUID(), bapId: body.bapId, userId: user.id, txid: body.txid, profile: JSON.stringify(body.profile), kind: body.kind ?? null, fundedBy: body.fundedBy ?? null, createdAt: now })
          .execute();
        await identities.setPublishedIdentity(trx, body.bapId, JSON.stringify(body.profile.identity), now);
        await trx.deleteFrom("bapProfileDraft").where("bapId", "=", body.bapId).execute();
      });
      return c.json({ status: "OK", result: { bapId: body.bapId, txid: body.txid, profile: body.profile, kind: body.kind ?? null, fundedBy: body.fundedBy ?? null, publishedAt: now.toISOString() } }, 201, NO_STORE);
    })
    .get("/profile/published", async (c) => {
      const { bapId } = readQuery(c, ByBapId);
      const row = await db.selectFrom("bapPublication").selectAll().where("bapId", "=", bapId).orderBy("createdAt", "desc").executeTakeFirst();
      if (!row) throw problems.notFound("No publication is recorded for that identity.");
      return c.json({ status: "OK", result: { bapId, txid: row.txid, profile: parseJsonOrNull(row.profile), kind: row.kind, fundedBy: row.fundedBy, publishedAt: asDate(row.createdAt).toISOString() } }, 200, NO_STORE);
    });

  return { users, bap };
}

import { Hono, type Context } from "hono";
import { createMiddleware } from "hono/factory";
import * as v from "valibot";
import { addressOf, bapIdOfMemberKey } from "../../lib/bap.js";
import { verifyBitcoinAuthToken } from "../../lib/bitcoin-auth.js";
import { problem, problems } from "../../lib/errors.js";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";
import { readJson, readQuery } from "../../lib/validate.js";
import { listRegistrations, registrationRecord } from "../../plugins/bap-identity/registrations.js";
import * as identities from "../../plugins/bap-identity/store.js";
import { removeBapIdentityKeepingAWayIn } from "../../plugins/sign-in-methods/index.js";
import { signedIn } from "../middleware.js";
import { BapId, ByBapId, Pubkey, publicRecord, writeQuota, type ProfileEnv } from "./shared.js";

/**
 * /api/user/bap-ids: the BAP identities registered to the signed-in user, and the public
 * lookup of the identities a member key controls.
 */
const Address = v.pipe(v.string(), v.regex(/^[1-9A-HJ-NP-Za-km-z]{25,35}$/, "must be a Bitcoin address"));
export const RegisterIdentity = v.strictObject({
  bapId: BapId,
  name: v.optional(v.pipe(v.string(), v.maxLength(200))),
  counter: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  isPrimary: v.optional(v.boolean()),
  accountPubkey: v.optional(Pubkey),
  currentAddress: v.optional(Address),
  profile: v.optional(v.record(v.string(), v.unknown())),
});

export const RotateMemberKey = v.strictObject({ bapId: BapId, memberPubkey: Pubkey, currentAddress: v.optional(Address) });

type Ctx = Context<ProfileEnv>;
const noSuchIdentity = () => problems.notFound("You have no BAP identity with that bapId.");

/** GET ?pubkey=: the public lookup used during login (which identities does this member key control?). */
const lookupByMemberKey = createMiddleware<ProfileEnv>(async (c, next) => {
  if (c.req.query("pubkey") === undefined) return next();
  const { pubkey } = readQuery(c, v.object({ pubkey: Pubkey }));
  return c.json({ bapIds: (await identities.listIdentitiesOfMemberKey(c.var.deps.db, pubkey)).map(publicRecord) });
});

async function listMine(c: Ctx) {
  return c.json({ bapIds: await listRegistrations(c.var.deps.db, c.var.session.user.id) });
}

const NOT_ROOT_KEY =
  "Registration is signed by the identity's root member key, whose address derives the bapId " +
  "(bsv-bap: identity.getWalletRoot(identity.rootPath); exportMember() returns it until the identity rotates). " +
  "A rotated key is added afterwards with POST /api/user/bap-ids/member-key.";

/**
 * Registering an identity claims it: the member key must prove control (its address is the
 * root address the bapId derives from), or anyone could put another's bap_id in tokens.
 */
async function register(c: Ctx) {
  const { db, bitcoinAuth } = c.var.deps;
  const { value: body, raw } = await readJson(c, RegisterIdentity, 64 * 1024);
  const proof = await verifyBitcoinAuthToken(c.req.header("x-auth-token"), { requestPath: "/api/user/bap-ids", body: raw }, bitcoinAuth);
  if (!proof.ok) throw problem(PROBLEM_CODES.INVALID_AUTH_TOKEN, { detail: "Sign this request with the identity's member key (header x-auth-token)." });
  if (bapIdOfMemberKey(proof.pubkey) !== body.bapId) throw problem(PROBLEM_CODES.NOT_MEMBER_KEY, { detail: NOT_ROOT_KEY });

  const { profile, ...fields } = body;
  const result = await identities.registerIdentity(db, c.var.session.user.id, {
    ...fields,
    memberPubkey: proof.pubkey,
    rootAddress: addressOf(proof.pubkey),
    ...(profile?.identity !== undefined ? { identity: JSON.stringify(profile.identity) } : {}),
  });
  if (result === "taken") throw problem(PROBLEM_CODES.BAP_ID_TAKEN);
  const row = (await identities.findIdentity(db, body.bapId))!;
  return c.json({ bapId: registrationRecord(row) }, result === "created" ? 201 : 200);
}

/**
 * A rotated member key (bsv-bap `incrementPath`: `exportMember()` then hands out the key at the
 * new path, which no longer derives the bapId). Two signatures over the same body: the key in
 * force (the registered member key, or the root key) hands over in `x-auth-token`, and the new
 * key proves it is held in `x-member-key-proof`. Afterwards the old key no longer signs in.
 */
async function rotateMemberKey(c: Ctx) {
  const { db, bitcoinAuth } = c.var.deps;
  const path = "/api/user/bap-ids/member-key";
  const { value: body, raw } = await readJson(c, RotateMemberKey, 4 * 1024);
  const from = await verifyBitcoinAuthToken(c.req.header("x-auth-token"), { requestPath: path, body: raw }, bitcoinAuth);
  if (!from.ok) throw problem(PROBLEM_CODES.INVALID_AUTH_TOKEN, { detail: "Sign this request with the identity's current member key (header x-auth-token)." });
  const to = await verifyBitcoinAuthToken(c.req.header("x-member-key-proof"), { requestPath: path, body: raw }, bitcoinAuth);
  if (!to.ok || to.pubkey !== body.memberPubkey) throw problem(PROBLEM_CODES.INVALID_AUTH_TOKEN, { detail: "Sign this request with the new member key too (header x-member-key-proof)." });
  const owned = await identities.findOwnedIdentity(db, c.var.session.user.id, body.bapId);
  if (!owned) throw noSuchIdentity();
  const rotated = await identities.rotateMemberKey(db, c.var.session.user.id, { bapId: body.bapId, from: from.pubkey, to: to.pubkey, currentAddress: body.currentAddress });
  if (!rotated) throw problem(PROBLEM_CODES.NOT_MEMBER_KEY, { detail: "x-auth-token is not signed by this identity's member key in force (or its root key), or the identity is suspended." });
  return c.json({ bapId: registrationRecord((await identities.findIdentity(db, body.bapId))!) });
}

/**
 * Lifts a suspension (plugins/bap-identity/mailbox-proof.ts). Someone else's identity answers like
 * a missing one (confirmBapIdentity reads only the caller's).
 */
async function confirm(c: Ctx) {
  const { db } = c.var.deps;
  const { value: body } = await readJson(c, ByBapId, 1024);
  if (!(await identities.confirmBapIdentity(db, c.var.session.user.id, body.bapId))) throw noSuchIdentity();
  return c.json({ bapId: registrationRecord((await identities.findIdentity(db, body.bapId))!) });
}

async function remove(c: Ctx) {
  const { db, auth } = c.var.deps;
  const { bapId } = readQuery(c, ByBapId);
  const result = await removeBapIdentityKeepingAWayIn(db, auth.$context, c.var.session.user.id, bapId);
  if (result === "not-found") throw noSuchIdentity();
  if (result === "last-sign-in-method") throw problem(PROBLEM_CODES.LAST_SIGN_IN_METHOD);
  return c.json({ status: "OK" });
}

/** Mounted at /api/user. */
export const userBapIdRoutes = new Hono<ProfileEnv>()
  .get("/bap-ids", lookupByMemberKey, signedIn, listMine)
  .post("/bap-ids", signedIn, writeQuota, register)
  .post("/bap-ids/confirm", signedIn, confirm)
  .post("/bap-ids/member-key", signedIn, writeQuota, rotateMemberKey)
  .delete("/bap-ids", signedIn, remove);

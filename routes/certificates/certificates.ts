import { Hono, type Context } from "hono";
import type { Kysely } from "kysely";
import * as v from "valibot";
import type { Auth } from "../../auth.config.js";
import { BAP_ID_PATTERN } from "../../lib/bap.js";
import { problem, problems } from "../../lib/errors.js";
import type { MutualAuth, MutualAuthEnv } from "../../lib/mutual-auth.js";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";
import { readJson, readQuery } from "../../lib/validate.js";
import { findOwnedIdentity } from "../../plugins/bap-identity/store.js";
import { eligibilityOf } from "./eligibility.js";
import { issueCertificate, type IssuableType } from "../../plugins/certificates/issuance.js";
import { progressRevocation, revocationView, RevocationFundingFailed, RevocationUnavailable, type RevocationChain } from "../../plugins/certificates/revocation.js";
import type { Logger } from "../../lib/logger.js";
import { findCertificate, listCertificatesOfSubject, moveRevocation, type IssuedCertificate } from "../../plugins/certificates/store.js";
import { signedIn, type RouteEnv } from "../middleware.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * Certificates (spec "Certificates and domain verification"), mounted at /api/certificates:
 *
 *   POST /signCertificate        BRC-52 issuance over BRC-103 mutual authentication; off unless
 *                                CERTIFICATE_ISSUANCE_ENABLED and a revocation chain is configured
 *                                (CERTIFICATE_FUNDING_KEY): 503, saying which
 *   GET  /status/{serialNumber}  public, no-store: the certificate's revocation state
 *   POST /revoke/{serialNumber}  the subject, over mutual authentication: starts (or advances) revocation
 *   GET  /issued                 the authenticated peer's own certificates (serials, types, revocation)
 *   GET  /readiness              always 503 (spec, Errors 9), status `disabled` or `protected`
 *   GET  /eligibility?bapId      signed-in owner: which catalog types the identity could get
 *
 * The wallet-binding routes are routes/certificates/wallet-binding.ts, mounted under /wallet-binding.
 */
export interface CertificateRouteDeps {
  auth: Auth;
  db: Kysely<Database>;
  mutualAuth: MutualAuth;
  issuanceEnabled: boolean;
  /** Confirmations after which a revocation is final (CERTIFICATE_REVOCATION_DEPTH). */
  revocationDepth: number;
  chain: RevocationChain;
  /** Why an outpoint could not be funded goes to the log, never to the caller. */
  logger: Logger;
  /** The types this server attests, by type ID (plugins/certificates/issuance.ts). */
  types: ReadonlyMap<string, IssuableType>;
}

type CertEnv = RouteEnv<CertificateRouteDeps, MutualAuthEnv["Variables"]>;
type C = Context<CertEnv>;

const Base64 = v.pipe(v.string(), v.regex(/^[A-Za-z0-9+/]+={0,2}$/, "must be Base64"), v.maxLength(4096));
const FieldMap = v.pipe(v.record(v.pipe(v.string(), v.maxLength(50)), Base64), v.check((m) => Object.keys(m).length <= 32, "at most 32 fields"));
export const SigningRequest = v.object({ clientNonce: Base64, type: Base64, fields: FieldMap, masterKeyring: FieldMap });
const Serial = v.pipe(v.string(), v.regex(/^[A-Za-z0-9+/_-]{1,88}={0,2}$/, "must be a Base64 serial number"));

/** Mutual authentication, then this route; the answer is signed for the peer either way. */
const peerOnly = (c: C, next: () => Promise<void>) => c.var.deps.mutualAuth.requirePeer(c as never, next);

async function signCertificate(c: C) {
  const { db, mutualAuth, issuanceEnabled, types, chain, logger } = c.var.deps;
  if (!issuanceEnabled) throw problem(PROBLEM_CODES.CERTIFICATE_ISSUANCE_DISABLED, { detail: "Certificate issuance is disabled on this server (CERTIFICATE_ISSUANCE_ENABLED=false)." });
  const { value } = await readJson(c, SigningRequest);
  const issued = await issueCertificate({ db, wallet: mutualAuth.wallet, certifier: mutualAuth.identityKey, types, chain }, c.var.peer.identityKey, value).catch((err: unknown) => {
    if (err instanceof RevocationUnavailable) throw problem(PROBLEM_CODES.CERTIFICATE_ISSUANCE_DISABLED, { detail: "Certificate issuance needs a funded revocation outpoint, and no revocation broadcaster is configured (CERTIFICATE_FUNDING_KEY)." });
    if (err instanceof RevocationFundingFailed) {
      logger.warn("revocation outpoint not funded", { reason: err.message });
      throw problem(PROBLEM_CODES.REVOCATION_FUNDING_UNAVAILABLE, { headers: { "retry-after": "30" } });
    }
    throw err;
  });
  return c.json(issued);
}

/** The serial number from the path: Base64 serials carry `/` and `+`, so clients percent-encode them. */
function serialOf(c: C): string {
  let serial = c.req.param("serialNumber") ?? "";
  try {
    if (serial.includes("%")) serial = decodeURIComponent(serial);
  } catch {
    // malformed escapes: refused below
  }
  if (!v.safeParse(Serial, serial).success) throw problems.badRequest("serialNumber must be a Base64 serial number (percent-encode / and +).");
  return serial;
}

async function certificateOr404(c: C, serialNumber: string) {
  const cert = await findCertificate(c.var.deps.db, serialNumber);
  if (!cert) throw problem(PROBLEM_CODES.CERTIFICATE_NOT_FOUND);
  return cert;
}

/** The next revocation steps the chain allows now; a chain that fails leaves the state as it was (tried again on the next call). */
function advance(c: C, cert: IssuedCertificate): Promise<IssuedCertificate> {
  const { db, chain, revocationDepth } = c.var.deps;
  return progressRevocation(db, chain, revocationDepth, cert).catch(() => cert);
}

/** Observation only: a broadcast or observed revocation is looked up on the chain as it is read. */
async function status(c: C) {
  let cert = await certificateOr404(c, serialOf(c));
  if (cert.revocationState === "broadcast" || cert.revocationState === "observed") cert = await advance(c, cert);
  return c.json({ serialNumber: cert.serialNumber, type: cert.type, certifier: cert.certifier, revocationOutpoint: cert.revocationOutpoint, issuedAt: cert.issuedAt.toISOString(), revocation: revocationView(cert) });
}

async function revoke(c: C) {
  const { db, chain } = c.var.deps;
  const serialNumber = serialOf(c);
  let cert = await certificateOr404(c, serialNumber);
  if (cert.subject !== c.var.peer.identityKey) throw problem(PROBLEM_CODES.NOT_CERTIFICATE_SUBJECT);
  if (cert.revocationState === null) {
    await moveRevocation(db, serialNumber, null, "prepared");
    cert = (await findCertificate(db, serialNumber))!;
  }
  cert = await advance(c, cert);
  const view = revocationView(cert);
  const note = chain.enabled ? undefined : "Revocation is not production-enabled: the request is recorded as prepared, and no spend is broadcast yet.";
  return c.json({ serialNumber, revocation: view, ...(note ? { note } : {}) }, view.final ? 200 : 202);
}

async function issuedToPeer(c: C) {
  const subject = c.var.peer.identityKey;
  const certs = await listCertificatesOfSubject(c.var.deps.db, subject);
  return c.json({ subject, certificates: certs.map((cert) => ({ serialNumber: cert.serialNumber, type: cert.type, issuedAt: cert.issuedAt.toISOString(), revocation: revocationView(cert) })) });
}

/** Spec, Errors 9: always 503. `protected` once issuance and revocation are both on (issuance is for authenticated peers only). */
function readiness(c: C) {
  const { issuanceEnabled, chain } = c.var.deps;
  const status = issuanceEnabled && chain.enabled ? "protected" : "disabled";
  return c.json({ status, issuance: issuanceEnabled, revocation: chain.enabled }, 503);
}

export const EligibilityQuery = v.object({ bapId: v.pipe(v.string(), v.regex(BAP_ID_PATTERN, "must be a BAP identity key")) });

async function eligibility(c: C) {
  const { db, issuanceEnabled, types, chain } = c.var.deps;
  const { bapId } = readQuery(c, EligibilityQuery);
  const user = c.var.session.user;
  if (!(await findOwnedIdentity(db, user.id, bapId))) throw problems.notFound("You have no BAP identity with that bapId.");
  // Issuing needs the switch and a chain to fund the revocation outpoint (readiness `protected`).
  const issuing = issuanceEnabled && chain.enabled;
  const issuable = new Set(issuing ? [...types.values()].map((t) => t.key) : []);
  return c.json({ bapId, issuanceEnabled, types: await eligibilityOf(db, { id: user.id, emailVerified: Boolean(user.emailVerified) }, bapId, issuable, issuing) });
}

export const certificateRoutes = new Hono<CertEnv>()
  .post("/signCertificate", peerOnly, signCertificate)
  .get("/status/:serialNumber{.+}", status)
  .post("/revoke/:serialNumber{.+}", peerOnly, revoke)
  .get("/issued", peerOnly, issuedToPeer)
  .get("/readiness", readiness)
  .get("/eligibility", signedIn, eligibility);

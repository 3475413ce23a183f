import { ECIES, PrivateKey, Utils } from "@bsv/sdk";
import { decryptBackup } from "bitcoin-backup";
import { BAP, bapIdFromPubkey } from "bsv-bap";

/**
 * Opening a `bitcoin-backup` file in the browser and finding the member key of each BAP
 * identity in it. Runs only in the page: nothing here touches the network, and nothing it
 * returns is ever sent anywhere except the public bapId.
 */

/** One identity the backup can sign in as: its bapId and the member key that derives it. */
export interface IdentityKey {
  bapId: string;
  key: PrivateKey;
}

export type BackupProblem =
  /** Wrong password, or not a bitcoin-backup ciphertext at all (AES-GCM cannot tell these apart). */
  | "undecryptable"
  /** Decrypted, but holds no BAP identity (a wallet or vault backup, say). */
  | "unsupported"
  /** The key in the backup does not derive the bapId the backup names. */
  | "mismatch"
  /** A member backup whose key is a rotated signing key, not the identity's member key. */
  | "not-member-key";

export class BackupError extends Error {
  constructor(readonly problem: BackupProblem) {
    super(problem);
    this.name = "BackupError";
  }
}

const BAP_ID = /^[1-9A-HJ-NP-Za-km-z]{20,44}$/;

/**
 * A decrypted backup, as untrusted data. (bitcoin-backup's own type guards are not reachable
 * through its published typings under NodeNext, and they check key presence only; these
 * check that the fields are strings.)
 */
export type DecryptedBackup = Record<string, unknown>;
const text = (backup: DecryptedBackup, key: string): string | null => (typeof backup[key] === "string" && backup[key] ? (backup[key] as string) : null);

export async function openBackup(ciphertext: string, password: string): Promise<DecryptedBackup> {
  let backup: unknown;
  try {
    backup = await decryptBackup(ciphertext.trim(), password);
  } catch {
    throw new BackupError("undecryptable");
  }
  if (!backup || typeof backup !== "object" || Array.isArray(backup)) throw new BackupError("unsupported");
  return backup as DecryptedBackup;
}

/** The identities a decrypted backup can sign in as, each checked against its own key. */
export function identitiesIn(backup: DecryptedBackup): IdentityKey[] {
  const ids = text(backup, "ids");
  const rootPk = text(backup, "rootPk");
  const xprv = text(backup, "xprv");
  const wif = text(backup, "wif");
  const id = text(backup, "id");
  if (ids && (rootPk || xprv)) return masterIdentities(ids, rootPk ? { rootPk } : xprv!);
  if (wif && id) return [memberIdentity(wif, id)];
  if (wif && !("id" in backup)) {
    // A bare key: the identity it is the member key of (the server says whether one is registered).
    const key = keyFromWif(wif);
    return [{ bapId: bapIdFromPubkey(key.toPublicKey().toString()), key }];
  }
  throw new BackupError("unsupported");
}

function keyFromWif(wif: string): PrivateKey {
  try {
    return PrivateKey.fromWif(wif);
  } catch {
    throw new BackupError("unsupported");
  }
}

/**
 * Member backup `{wif, id}`. `id` is the bapId itself, or (as bsv-bap's `exportMemberForBackup`
 * writes it) the member identity encrypted to the key with ECIES, which names its `identityKey`.
 * Either way the key must derive that bapId: the member key's address is the identity's root
 * address, so `bapIdFromPubkey(memberPubkey) === bapId`.
 */
function memberIdentity(wif: string, id: string): IdentityKey {
  const key = keyFromWif(wif);
  const derived = bapIdFromPubkey(key.toPublicKey().toString());
  let named: string;
  if (BAP_ID.test(id)) {
    named = id;
  } else {
    try {
      const identity = JSON.parse(Utils.toUTF8(ECIES.electrumDecrypt(Utils.toArray(id, "base64"), key))) as { identityKey?: unknown };
      if (typeof identity.identityKey !== "string") throw new Error("no identityKey");
      named = identity.identityKey;
    } catch {
      throw new BackupError("unsupported");
    }
    // bsv-bap's BIP32 member export carries the current signing key, which cannot sign in.
    if (named !== derived) throw new BackupError("not-member-key");
  }
  if (named !== derived) throw new BackupError("mismatch");
  return { bapId: named, key };
}

/** Master backup `{ids, rootPk}` (Type 42) or `{ids, xprv}` (BIP32): every identity it holds. */
function masterIdentities(ids: string, master: { rootPk: string } | string): IdentityKey[] {
  let bap: BAP;
  try {
    bap = new BAP(master);
    bap.importIds(ids);
  } catch {
    throw new BackupError("unsupported");
  }
  const identities: IdentityKey[] = [];
  for (const bapId of bap.listIds()) {
    const id = bap.getId(bapId);
    if (!id) continue;
    // The member key lives at the identity's root path and never rotates.
    const key = id.getWalletRoot(id.rootPath);
    if (bapIdFromPubkey(key.toPublicKey().toString()) !== bapId) throw new BackupError("mismatch");
    identities.push({ bapId, key });
  }
  if (!identities.length) throw new BackupError("unsupported");
  return identities;
}

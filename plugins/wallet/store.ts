import { randomUUID } from "node:crypto";
import type { Kysely, Updateable } from "kysely";
import { rowReader } from "../../lib/db/sqlite-values.js";
import { findSelectedIdentity } from "../bap-identity/store.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * Every read and write of the `walletConnection` table. Changes take the caller's user id and
 * touch only that user's rows, so another person's connection reads as missing. The rules
 * "one primary wallet per identity" and "one payment wallet per identity" live here once.
 */

export interface WalletConnection {
  id: string;
  userId: string;
  bapId: string;
  address: string;
  pubkey: string;
  provider: string;
  connectionMethod: string;
  identityPubkey: string | null;
  paymentAddress: string | null;
  isPrimary: boolean;
  isPayment: boolean;
  connectedAt: Date;
  lastVerified: Date;
}

const toConnection = rowReader("walletConnection", ["id", "userId", "bapId", "address", "pubkey", "provider", "connectionMethod", "identityPubkey", "paymentAddress", "isPrimary", "isPayment", "connectedAt", "lastVerified"]);

const connections = (db: Kysely<Database>, userId: string) => db.selectFrom("walletConnection").selectAll().where("userId", "=", userId);

/** The user's connections (of one identity, when given): primary first, then oldest first. */
export async function listConnections(db: Kysely<Database>, userId: string, bapId?: string): Promise<WalletConnection[]> {
  const query = bapId ? connections(db, userId).where("bapId", "=", bapId) : connections(db, userId);
  return (await query.orderBy("isPrimary", "desc").orderBy("connectedAt", "asc").orderBy("id", "asc").execute()).map(toConnection);
}

export async function findConnection(db: Kysely<Database>, userId: string, bapId: string, address: string): Promise<WalletConnection | null> {
  const row = await connections(db, userId).where("bapId", "=", bapId).where("address", "=", address).executeTakeFirst();
  return row ? toConnection(row) : null;
}

export interface NewConnection {
  bapId: string;
  address: string;
  pubkey: string;
  provider: string;
  connectionMethod: string;
  identityPubkey?: string;
  paymentAddress?: string;
}

/**
 * Records a proven connection, or refreshes it (provider, proof time) when the address was
 * already connected to the identity. An identity's first wallet becomes its primary one.
 * "taken" when another account holds the same identity|address pair (it cannot: identities
 * belong to one account; kept as a guard).
 */
export async function saveConnection(db: Kysely<Database>, userId: string, input: NewConnection, now = new Date()): Promise<WalletConnection | "taken"> {
  return db.transaction().execute(async (trx) => {
    const bapAddress = `${input.bapId}|${input.address}`;
    const existing = await trx.selectFrom("walletConnection").select(["id", "userId"]).where("bapAddress", "=", bapAddress).executeTakeFirst();
    if (existing && existing.userId !== userId) return "taken" as const;
    const fields = {
      pubkey: input.pubkey,
      provider: input.provider,
      connectionMethod: input.connectionMethod,
      identityPubkey: input.identityPubkey ?? null,
      ...(input.paymentAddress ? { paymentAddress: input.paymentAddress } : {}),
      lastVerified: now,
    };
    if (existing) {
      await trx.updateTable("walletConnection").set(fields).where("id", "=", existing.id).execute();
    } else {
      const first = !(await connections(trx, userId).where("bapId", "=", input.bapId).executeTakeFirst());
      await trx
        .insertInto("walletConnection")
        .values({ id: randomUUID(), userId, bapId: input.bapId, bapAddress, address: input.address, isPrimary: first, isPayment: false, connectedAt: now, paymentAddress: null, ...fields })
        .execute();
    }
    return (await findConnection(trx, userId, input.bapId, input.address))!;
  });
}

/**
 * Removes the association only. When it was the identity's primary wallet, the oldest
 * remaining one takes its place. False when the user has no such connection.
 */
export async function removeConnection(db: Kysely<Database>, userId: string, bapId: string, address: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await findConnection(trx, userId, bapId, address);
    if (!row) return false;
    await trx.deleteFrom("walletConnection").where("id", "=", row.id).execute();
    if (row.isPrimary) {
      const next = (await listConnections(trx, userId, bapId))[0];
      if (next) await trx.updateTable("walletConnection").set({ isPrimary: true }).where("id", "=", next.id).execute();
    }
    return true;
  });
}

/** Exactly one of the identity's wallets is marked by `flag`; null when the user has no such connection. */
async function markOne(db: Kysely<Database>, flag: "isPrimary" | "isPayment", userId: string, bapId: string, address: string, extra: Updateable<Database["walletConnection"]> = {}): Promise<WalletConnection | null> {
  return db.transaction().execute(async (trx) => {
    const row = await findConnection(trx, userId, bapId, address);
    if (!row) return null;
    await trx.updateTable("walletConnection").set({ [flag]: false }).where("userId", "=", userId).where("bapId", "=", bapId).execute();
    await trx.updateTable("walletConnection").set({ [flag]: true, ...extra }).where("id", "=", row.id).execute();
    return findConnection(trx, userId, bapId, address);
  });
}

/** The identity's wallet for receiving NFTs. */
export function makePrimaryWallet(db: Kysely<Database>, userId: string, bapId: string, address: string): Promise<WalletConnection | null> {
  return markOne(db, "isPrimary", userId, bapId, address);
}

/** Payment wallets: providers whose wallets hold a separate funding address we can pay to. */
export const PAYMENT_PROVIDERS = ["yours", "1sat"] as const;

export const canReceivePayments = (w: Pick<WalletConnection, "provider">) => (PAYMENT_PROVIDERS as readonly string[]).includes(w.provider);

/**
 * The identity's wallet for payments, with the deposit address payments go to (when given):
 * only a `yours` or `1sat` wallet ("unsupported", with the wallet found); null when the user
 * has no such connection.
 */
export async function makePaymentWallet(
  db: Kysely<Database>,
  userId: string,
  bapId: string,
  address: string,
  depositAddress?: string,
): Promise<WalletConnection | { unsupported: WalletConnection } | null> {
  const current = await findConnection(db, userId, bapId, address);
  if (!current) return null;
  if (!canReceivePayments(current)) return { unsupported: current };
  return markOne(db, "isPayment", userId, bapId, address, depositAddress ? { paymentAddress: depositAddress } : {});
}

/**
 * Where the user's NFTs go: the primary wallet of their primary identity (in force), when it
 * can hold 1Sat ordinals (an EVM account cannot). Null when there is no such wallet.
 */
export async function findPrimaryOrdinalsWallet(db: Kysely<Database>, userId: string): Promise<WalletConnection | null> {
  const identity = await findSelectedIdentity(db, userId);
  if (!identity) return null;
  const primary = (await listConnections(db, userId, identity.bapId)).find((c) => c.isPrimary);
  return primary && primary.connectionMethod !== "evm" ? primary : null;
}

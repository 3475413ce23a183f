import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { rowReader } from "../../lib/db/sqlite-values.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * Every read and write of the `clientBranding` table: one brand per client, replaced whole by
 * its owner. The logo's bytes are read only by `findLogo` (the logo route), so a page that
 * shows the brand never loads them.
 */

/** What a page or the API shows of a brand; the logo by its hash (null: no logo). */
export interface ClientBrand {
  clientId: string;
  displayName: string;
  logoUri: string | null;
  logoHash: string | null;
  accentColor: string | null;
  supportUrl: string | null;
  updatedAt: Date;
}

/** A stored logo: the image as fetched once from the owner's https URL. */
export interface StoredLogo {
  type: string;
  bytes: Buffer;
  hash: string;
}

const readBrand = rowReader("clientBranding", ["clientId", "displayName", "logoUri", "logoHash", "accentColor", "supportUrl", "updatedAt"]);

export async function findBrand(db: Kysely<Database>, clientId: string): Promise<ClientBrand | null> {
  const row = await db
    .selectFrom("clientBranding")
    .select(["clientId", "displayName", "logoUri", "logoHash", "accentColor", "supportUrl", "updatedAt"])
    .where("clientId", "=", clientId)
    .executeTakeFirst();
  return row ? readBrand(row) : null;
}

export async function findLogo(db: Kysely<Database>, clientId: string): Promise<StoredLogo | null> {
  const row = await db.selectFrom("clientBranding").select(["logoType", "logoData", "logoHash"]).where("clientId", "=", clientId).executeTakeFirst();
  if (!row?.logoType || !row.logoData || !row.logoHash) return null;
  return { type: row.logoType, bytes: Buffer.from(row.logoData, "base64"), hash: row.logoHash };
}

export interface BrandInput {
  displayName: string;
  logoUri: string | null;
  accentColor: string | null;
  supportUrl: string | null;
}

/**
 * Sets the client's brand. `logo`: the newly fetched image, null to have none, or "keep" for
 * the one stored (its `logoUri` unchanged, so it is not fetched again).
 */
export async function saveBrand(db: Kysely<Database>, clientId: string, input: BrandInput, logo: StoredLogo | null | "keep", now = new Date()): Promise<ClientBrand> {
  const logoColumns = logo === "keep" ? {} : { logoType: logo?.type ?? null, logoData: logo ? logo.bytes.toString("base64") : null, logoHash: logo?.hash ?? null };
  const values = { displayName: input.displayName, logoUri: input.logoUri, accentColor: input.accentColor, supportUrl: input.supportUrl, ...logoColumns, updatedAt: now };
  await db
    .insertInto("clientBranding")
    .values({ id: randomUUID(), clientId, logoType: null, logoData: null, logoHash: null, ...values, createdAt: now })
    .onConflict((oc) => oc.column("clientId").doUpdateSet(values))
    .execute();
  return (await findBrand(db, clientId))!;
}

/** Removes the client's brand; false when it had none. */
export async function deleteBrand(db: Kysely<Database>, clientId: string): Promise<boolean> {
  const result = await db.deleteFrom("clientBranding").where("clientId", "=", clientId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The brands of `clientIds`, by client id. */
export async function findBrands(db: Kysely<Database>, clientIds: readonly string[]): Promise<Map<string, ClientBrand>> {
  if (!clientIds.length) return new Map();
  const rows = await db
    .selectFrom("clientBranding")
    .select(["clientId", "displayName", "logoUri", "logoHash", "accentColor", "supportUrl", "updatedAt"])
    .where("clientId", "in", clientIds)
    .execute();
  return new Map(rows.map((row) => [row.clientId, readBrand(row)]));
}

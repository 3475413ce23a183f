import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { ConfigError } from "./config-error.js";

/**
 * The file side of the settings, apart from their parsing (lib/env.ts parseSettings reads and
 * writes nothing): values kept in the data directory when no setting gives them (the
 * development secret, the server identity key), and files a setting names (extra CAs).
 */

/** A value kept in `dataDir/name`: read when the file is there, else `create()`d and written once (mode 600). */
export function keptFile(dataDir: string, name: string, create: () => string): string {
  const file = resolve(dataDir, name);
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dirname(file), { recursive: true });
  const value = create();
  writeFileSync(file, value + "\n", { mode: 0o600 });
  return value;
}

/** OUTBOUND_EXTRA_CA_FILE: PEM certificates, read once. */
export function readCaFile(path: string): string {
  let pem: string;
  try {
    pem = readFileSync(path, "utf8");
  } catch {
    throw new ConfigError(`OUTBOUND_EXTRA_CA_FILE: cannot read ${path}`);
  }
  if (!pem.includes("-----BEGIN CERTIFICATE-----")) throw new ConfigError("OUTBOUND_EXTRA_CA_FILE: must hold PEM certificates");
  return pem;
}

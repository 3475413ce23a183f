import { AGENT_AUTH_ERROR_CODES, agentError } from "@better-auth/agent-auth";
import type { Kysely } from "kysely";
import * as v from "valibot";
import { problem, ProblemError } from "../../lib/errors.js";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";
import { backupStatus, pushBackup, PushBackupInput, type BackupCaller } from "../backup/service.js";
import { listRegistrations } from "../bap-identity/registrations.js";
import type { OrdinalsIndexer } from "../wallet/ordinals.js";
import { OwnershipQuery, verifyOwnership } from "../wallet/ownership.js";
import { AGENT_ERROR_CODES as CODES } from "./error-codes.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * What agents may do here (Agent Auth Protocol §4): each capability has a JSON Schema for
 * its `arguments`, and runs through the same functions as the REST route that does the same
 * thing for a session or an OAuth token (plugins/backup/service.ts, plugins/bap-identity/
 * registrations.ts, plugins/wallet/ownership.ts), so an agent can never do more, or other, than those routes allow.
 */

export interface CapabilityDeps {
  db: Kysely<Database>;
  /** Largest `encryptedBackup` accepted (BACKUP_MAX_BYTES), as for POST /api/backup. */
  backupMaxBytes: number;
  /** The NFT indexer client, as for POST /api/wallet/verify-ownership. */
  ordinals: OrdinalsIndexer;
}

/** Who the agent acts for, as agent-auth resolved it from a verified agent JWT. */
export interface AgentActor {
  agentId: string;
  userId: string;
  user: { id: string; name?: unknown; email?: unknown; emailVerified?: unknown; image?: unknown };
}

const NO_ARGUMENTS = { type: "object", properties: {}, additionalProperties: false } as const;

export function capabilityDefinitions({ backupMaxBytes }: Pick<CapabilityDeps, "backupMaxBytes">) {
  return [
    {
      name: "profile.read",
      description: "Read your account profile (name, e-mail, picture) and the BAP identities registered to your account.",
      input: NO_ARGUMENTS,
      output: {
        type: "object",
        properties: {
          user: { type: "object", properties: { id: { type: "string" }, name: { type: "string" }, email: { type: "string" }, emailVerified: { type: "boolean" }, image: { type: ["string", "null"] } } },
          identities: { type: "array", description: "Registration records, as GET /api/user/bap-ids answers them", items: { type: "object" } },
        },
      },
    },
    {
      name: "backup.status",
      description: "See whether an encrypted backup of your primary BAP identity is stored, when it was last updated, and which sign-in accounts can recover it.",
      input: NO_ARGUMENTS,
      output: { type: "object", description: "As GET /api/backup/status answers it", properties: { hasBackup: { type: "boolean" }, updatedAt: { type: ["string", "null"] }, bapId: { type: ["string", "null"] }, generation: { type: ["integer", "null"] } } },
    },
    {
      name: "backup.push",
      description: "Store a new encrypted backup of your primary BAP identity, replacing the old one. Ciphertext only: the keys inside are never readable by this service.",
      input: {
        type: "object",
        required: ["encryptedBackup"],
        properties: {
          encryptedBackup: { type: "string", minLength: 16, maxLength: backupMaxBytes, pattern: "^[A-Za-z0-9+/_-]+={0,2}$", description: "bitcoin-backup ciphertext (base64)" },
          bapId: { type: "string", description: "Optional; if given, must be your primary identity's key" },
        },
        additionalProperties: false,
      },
      output: { type: "object", properties: { success: { type: "boolean" }, bapId: { type: "string" }, generation: { type: "integer" } } },
    },
    {
      name: "nft.verify_ownership",
      description:
        "Check whether the wallets connected to your primary BAP identity hold at least minCount NFTs of an origin or collection. When the NFT indexer cannot answer for a wallet, the answer says so (incomplete: true, failedWallets) instead of a plain no.",
      input: {
        type: "object",
        properties: {
          origin: { type: "string", description: "NFT origin outpoint (txid_vout)" },
          collection: { type: "string", description: "Collection id" },
          minCount: { type: "integer", minimum: 1, default: 1 },
        },
        oneOf: [{ required: ["origin"] }, { required: ["collection"] }],
        additionalProperties: false,
      },
      output: {
        type: "object",
        description: "As POST /api/wallet/verify-ownership answers it",
        properties: { owns: { type: "boolean" }, count: { type: "integer" }, incomplete: { type: "boolean" }, failedWallets: { type: "array", items: { type: "string" } }, nfts: { type: "array", items: { type: "object" } } },
      },
    },
  ];
}

export type CapabilityName = "profile.read" | "backup.status" | "backup.push" | "nft.verify_ownership";

const NoArguments = v.strictObject({});
const PushArguments = v.strictObject(PushBackupInput.entries);

/** Arguments checked at the edge, like a REST body: 400 with the JSON pointer of each bad member. */
function argumentsOf<S extends v.GenericSchema>(schema: S, input: Record<string, unknown> | undefined): v.InferOutput<S> {
  const result = v.safeParse(schema, input ?? {});
  if (result.success) return result.output;
  const errors = result.issues.map((issue) => ({ pointer: "/" + (issue.path?.map((p) => String(p.key)).join("/") ?? ""), reason: issue.message }));
  throw agentError(400, CODES.INVALID_ARGUMENTS, `The arguments are invalid: ${errors.map((e) => `${e.pointer} ${e.reason}`).join("; ")}`, undefined, { errors });
}

/** Our problem vocabulary, spoken in agent-auth's `{error, message}` shape (it passes APIErrors through). */
function asAgentError(err: unknown): unknown {
  if (!(err instanceof ProblemError)) return err;
  return agentError(err.status as 400, { code: (err.extra.code ?? CODES.REQUEST_FAILED.code).toLowerCase(), message: err.detail });
}

/** Runs one capability for the agent's owner. */
export async function executeCapability(deps: CapabilityDeps, capability: string, args: Record<string, unknown> | undefined, actor: AgentActor): Promise<unknown> {
  const caller: BackupCaller = { userId: actor.userId, referenceId: null, via: "agent" };
  try {
    switch (capability as CapabilityName) {
      case "profile.read": {
        argumentsOf(NoArguments, args);
        const { id, name, email, emailVerified, image } = actor.user;
        return { user: { id, name, email, emailVerified: emailVerified === true, image: image ?? null }, identities: await listRegistrations(deps.db, actor.userId) };
      }
      case "backup.status":
        argumentsOf(NoArguments, args);
        return await backupStatus(deps.db, caller);
      case "backup.push": {
        const input = argumentsOf(PushArguments, args);
        if (input.encryptedBackup.length > deps.backupMaxBytes) throw problem(PROBLEM_CODES.BACKUP_TOO_LARGE, { detail: `encryptedBackup is over the ${deps.backupMaxBytes}-byte limit.` });
        return await pushBackup(deps.db, caller, input);
      }
      case "nft.verify_ownership":
        return await verifyOwnership(deps.db, deps.ordinals, actor.userId, argumentsOf(OwnershipQuery, args));
    }
  } catch (err) {
    throw asAgentError(err);
  }
  throw agentError(404, AGENT_AUTH_ERROR_CODES.CAPABILITY_NOT_FOUND, `Capability "${capability}" does not exist.`);
}

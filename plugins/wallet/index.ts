import type { BetterAuthPlugin } from "better-auth";
import { walletSchema } from "./schema.js";

/**
 * Wallet connections: the table only (`npm run db:migrate` creates it). The HTTP surface is
 * the Hono sub-app in routes/wallet/wallet.ts, mounted at /api/wallet and, for the published Sigma
 * client, at /api/auth/wallet; it reads and writes through ./store.ts and checks NFTs
 * through ./ownership.ts.
 */
export function wallet() {
  return {
    id: "bap-wallet",
    schema: walletSchema,
  } satisfies BetterAuthPlugin;
}

import type { Kysely } from "kysely";
import type { Database } from "../../lib/db/tables.js";
import type { Logger } from "../../lib/logger.js";
import type { RouteDeps } from "../middleware.js";

/** What the agents routes (./agents.ts, ./host-client.ts) are mounted with. */
export interface AgentRouteDeps extends RouteDeps {
  db: Kysely<Database>;
  authUrl: string;
  logger?: Logger;
}

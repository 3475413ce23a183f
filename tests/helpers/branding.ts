import type { TierOwnershipChecker } from "../../plugins/subscriptions/ownership.js";
import type { PaidTierId } from "../../plugins/subscriptions/tiers.js";
import { REDIRECT, signUp } from "./oauth.js";
import { cookiesOf, type TestServer } from "./server.js";

/** A 1×1 PNG: the smallest real image a logo can be. */
export const PNG_1PX = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");

/**
 * The tier-NFT ownership service faked through its interface (as tests/wallet/account-billing
 * does): who holds which tier. The tier service in front of it is the real one.
 */
export function tierHolders() {
  const owned = new Map<string, PaidTierId>();
  const ownership: TierOwnershipChecker = {
    async ownsTierNft(userId, tier) {
      return owned.get(userId) === tier ? { nftOrigin: `${"cd".repeat(32)}_0`, walletAddress: "1BrandWa11etxxxxxxxxxxxxxxxxxxxxx" } : null;
    },
  };
  return { ownership, give: (userId: string, tier: PaidTierId) => owned.set(userId, tier) };
}

/** A person who signs up and registers a client while signed in (so owns it); with `tier`, they hold it. */
export async function ownerWithClient(server: TestServer, holders: ReturnType<typeof tierHolders>, tier: PaidTierId | "free", metadata: Record<string, unknown> = {}) {
  const person = await signedUp(server);
  if (tier !== "free") holders.give(person.user.id, tier);
  const res = await server.api("/api/auth/oauth2/register", {
    cookie: person.cookie,
    body: { client_name: "Registered Name", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", grant_types: ["authorization_code"], response_types: ["code"], ...metadata },
  });
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${res.text}`);
  return { ...person, clientId: res.json.client_id as string };
}

export const brandingPath = (clientId: string) => `/api/clients/${encodeURIComponent(clientId)}/branding`;

/** A signed-up person with a session; with REQUIRE_EMAIL_VERIFICATION on, their address marked verified (as its link would) and signed in. */
async function signedUp(server: TestServer) {
  const person = await signUp(server);
  if (person.cookie) return person;
  await server.db.updateTable("user").set({ emailVerified: true }).where("id", "=", person.user.id).execute();
  const res = await server.api("/api/auth/sign-in/email", { body: { email: person.email, password: person.password } });
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${res.text}`);
  return { ...person, cookie: cookiesOf(res.headers) };
}

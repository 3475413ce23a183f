import { afterAll, describe, expect, it } from "vitest";
import type { TierOwnershipChecker } from "../../plugins/subscriptions/ownership.js";
import { useTestServer } from "../helpers/fixtures.js";
import { startIndexer, txo } from "../helpers/ordinals.js";
import { connectWallet, personWithIdentity } from "../helpers/wallet.js";

/**
 * Each account page reads only what it shows: the NFT indexer (a stand-in speaking its HTTP
 * API) is asked only by the identities page, which lists the NFTs, and the tier check only by
 * the plan page; the overview and the other pages ask neither.
 */
let tierChecks = 0;
const ownership: TierOwnershipChecker = {
  async ownsTierNft() {
    tierChecks += 1;
    return null;
  },
};
let indexer: Awaited<ReturnType<typeof startIndexer>>;
const server = useTestServer(async () => {
  indexer = await startIndexer();
  return { ORDINALS_API_URL: indexer.url, ORDINALS_API_TIMEOUT: "300", OUTBOUND_ALLOW_PRIVATE: "true" };
}, { subscriptions: { ownership } });
afterAll(async () => {
  await indexer?.close();
});

describe("account pages read only what they show", () => {
  it("asks the NFT indexer only for the identities page, and the tier check only for the plan page", async () => {
    const person = await personWithIdentity(server);
    const w = await connectWallet(server, person, "yours");
    indexer.script(w.address, { kind: "ok", txos: [txo(w.address)] });
    const checksBefore = tierChecks;
    const visit = async (path: string) => {
      const res = await server.api(path, { cookie: person.cookie });
      expect(res.status, path).toBe(200);
      return res.text;
    };

    for (const path of ["/account", "/account/security", "/account/apps", "/account/organizations"]) {
      await visit(path);
      expect(indexer.hits(w.address), path).toBe(0);
      expect(tierChecks, path).toBe(checksBefore);
    }

    expect(await visit("/account/identities")).toContain('<section id="nfts"');
    expect(indexer.hits(w.address)).toBeGreaterThan(0);
    expect(tierChecks).toBe(checksBefore);

    const hits = indexer.hits(w.address);
    expect(await visit("/account/plan")).toContain('<section id="subscription"');
    expect(tierChecks).toBeGreaterThan(checksBefore);
    expect(indexer.hits(w.address)).toBe(hits);
  });
});

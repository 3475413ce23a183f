import { describe, expect, it } from "vitest";
import { parseSettings } from "../../lib/env.js";
import { useTestServer } from "../helpers/fixtures.js";
import { fullCodeFlow, token } from "../helpers/oauth.js";

/**
 * A refresh token's lifetime (spec, Defaults: 604800 s, REFRESH_TOKEN_TTL): refused once it has
 * run out, here with a lifetime of 5 seconds. The client is a plain public client (registered
 * without `member_pubkey`), whose refreshes need no member-key signature.
 */
const server = useTestServer({ REFRESH_TOKEN_TTL: "5" });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("refresh token lifetime", () => {
  it("defaults to 604800 seconds", () => {
    expect(parseSettings({}).ttl.refreshToken).toBe(604800);
  });

  it("refreshes within the lifetime (no X-Auth-Token for a client without member_pubkey), and refuses a refresh token past it with invalid_grant", async () => {
    const { client, tokens } = await fullCodeFlow(server);
    expect(tokens.status).toBe(200);
    expect(tokens.json.refresh_token).toBeTruthy();
    expect(client.member_pubkey).toBeUndefined();
    const fresh = await token(server, { grant_type: "refresh_token", refresh_token: tokens.json.refresh_token, client_id: client.client_id });
    expect(fresh.status, fresh.text).toBe(200);
    const rotated = fresh.json.refresh_token as string;
    expect(rotated).toBeTruthy();

    await sleep(5500);
    const late = await token(server, { grant_type: "refresh_token", refresh_token: rotated, client_id: client.client_id });
    expect(late.status).toBe(400);
    expect(late.json.error).toBe("invalid_grant");
    expect(late.json.access_token).toBeUndefined();
  });
});

import { describe, expect, it } from "vitest";
import { axeViolations } from "../helpers/axe.js";
import { addCookies, submitWith } from "../helpers/browser.js";
import { useBrowser, useCallbackServer, useTestServer } from "../helpers/fixtures.js";
import { authorizationRequest, registerClient, signUp } from "../helpers/oauth.js";
import { postForm } from "../helpers/server.js";

/**
 * The consent page puts RFC 9396 authorization_details into words, so the person knows exactly
 * which transfer and which capability they allow; seen in headless Chromium, checked with axe.
 */
const server = useTestServer();
const browser = useBrowser();
const callback = useCallbackServer();
const BANK = "https://payments.example/api";
const details = [
  { type: "payment_transfer", instructedAmount: { currency: "USD", amount: "1000" }, creditorAccount: { address: "1BoatSLRHtKNngkdXEeobR76b53LETtpyT" }, creditorName: "Alice" },
  { type: "agent_capability", capability: "nft.verify_ownership", constraints: { collection: "bap-pass" } },
];

describe("authorization_details on the consent page", () => {
  it("shows each detail in words, passes axe, and the allowed code carries them", async () => {
    const person = await signUp(server);
    const client = await registerClient(server, { redirect_uris: [callback.redirectUri] });
    const request = authorizationRequest(server, client.client_id, { redirectUri: callback.redirectUri, scope: "openid", extra: { resource: BANK } });
    // Pushed, as a client with details of any size would send them.
    const pushed = await postForm(server, "/api/auth/oauth2/par", { ...request.params, authorization_details: JSON.stringify(details) });
    expect(pushed.status, pushed.text).toBe(201);

    const context = await browser.context();
    await addCookies(context, person.cookie, server.url);
    const page = await context.newPage();
    await page.goto(`${server.url}/api/auth/oauth2/authorize?${new URLSearchParams({ client_id: client.client_id, request_uri: pushed.json.request_uri })}`);
    expect(new URL(page.url()).pathname).toBe("/consent");
    const items = await page.locator("ul.details li").allInnerTexts();
    expect(items).toEqual([
      "Transfer at most 1000 USD to Alice, account 1BoatSLRHtKNngkdXEeobR76b53LETtpyT.",
      expect.stringMatching(/^Use the “nft\.verify_ownership” capability: Check whether the wallets connected to your primary BAP identity hold .* Only with collection = bap-pass\.$/),
    ]);
    expect(await page.locator("main").innerText()).toContain("For this request only, it asks to:");
    expect(await axeViolations(page)).toEqual([]);

    await submitWith(page, "Allow");
    const back = new URL(page.url());
    expect(`${back.origin}${back.pathname}`).toBe(callback.redirectUri);
    expect(back.searchParams.get("code")).toBeTruthy();
    expect(back.searchParams.get("state")).toBe(request.state);
  });
});

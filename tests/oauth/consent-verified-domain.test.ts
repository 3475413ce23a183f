import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { addCookies } from "../helpers/browser.js";
import { useDnsServer } from "../helpers/dns-server.js";
import { useBrowser, useTestServer } from "../helpers/fixtures.js";
import { authorizationRequest, REDIRECT, signUp } from "../helpers/oauth.js";
import { personWithIdentity, type Person } from "../helpers/wallet.js";

/**
 * The consent page tells the truth about where the code goes (registration is open, so a
 * client's name proves nothing): it shows the redirect URI's origin, marks it verified only
 * when a domain verification in force ties that host to this client, says "unverified app"
 * otherwise, and warns about loopback destinations. Seen in headless Chromium.
 */
const dns = useDnsServer();
const server = useTestServer(() => ({ DNS_RESOLVER_SERVERS: dns.address }));
const browser = useBrowser();

const VERIFIED_HOST = `app-${process.pid}.example.test`;

function register(metadata: Record<string, unknown>, cookie?: string) {
  return server.api("/api/auth/oauth2/register", {
    cookie,
    body: { token_endpoint_auth_method: "none", grant_types: ["authorization_code"], response_types: ["code"], ...metadata },
  });
}

/** A client `owner` registered for `host`, with the host verified over DNS and tied to the client. */
async function verifiedClient(owner: Person, host: string) {
  const client = await register({ client_name: "Honest App", redirect_uris: [`https://${host}/callback`] }, owner.cookie);
  expect(client.status).toBe(201);
  const clientId = client.json.client_id as string;
  const created = await server.api("/api/domain-verifications", { cookie: owner.cookie, body: { bapId: owner.id.bapId, domain: host, method: "dns", oauthClientId: clientId } });
  expect(created.status).toBe(201);
  dns.setTxt(created.json.challenge.name, [[created.json.challenge.value]]);
  const verified = await server.api(`/api/domain-verifications/${created.json.id}/verify`, { cookie: owner.cookie, method: "POST" });
  expect(verified.json.status).toBe("verified");
  return { clientId, verificationId: created.json.id as string };
}

/** A signed-in person's browser on the consent page of `clientId`'s request to `redirectUri`. */
async function consentPage(clientId: string, redirectUri: string, resources: string[] = []): Promise<Page> {
  const person = await signUp(server);
  const context = await browser.context();
  await addCookies(context, person.cookie, server.url);
  const page = await context.newPage();
  const url = new URL(authorizationRequest(server, clientId, { redirectUri, scope: "openid" }).url);
  for (const resource of resources) url.searchParams.append("resource", resource);
  await page.goto(url.href);
  expect(new URL(page.url()).pathname).toBe("/consent");
  return page;
}

const text = (page: Page) => page.locator("main").innerText();

describe("the consent page's destination", () => {
  it("marks a host verified for the client whose owner verified it", async () => {
    const owner = await personWithIdentity(server);
    const { clientId } = await verifiedClient(owner, VERIFIED_HOST);
    const page = await consentPage(clientId, `https://${VERIFIED_HOST}/callback`);
    const shown = await text(page);
    expect(shown).toContain(`you will be sent back to https://${VERIFIED_HOST}`);
    expect(shown).toContain(`Verified: the owner of this app has proved control of https://${VERIFIED_HOST}`);
    expect(shown).not.toContain("Unverified app");
    expect(shown).not.toContain("localhost");
  });

  it("says unverified for a look-alike client on the same host, and for an unowned client", async () => {
    // Someone else registers the verified host as their redirect: the verification is not theirs.
    const owner = await personWithIdentity(server);
    await verifiedClient(owner, `shared-${VERIFIED_HOST}`);
    const other = await signUp(server);
    const lookAlike = await register({ client_name: "Honest App", redirect_uris: [`https://shared-${VERIFIED_HOST}/callback`] }, other.cookie);
    const page = await consentPage(lookAlike.json.client_id, `https://shared-${VERIFIED_HOST}/callback`);
    const shown = await text(page);
    expect(shown).toContain(`you will be sent back to https://shared-${VERIFIED_HOST}`);
    expect(shown).toContain(`Unverified app: nobody has proved who runs https://shared-${VERIFIED_HOST}`);
    expect(shown).not.toContain("Verified:");

    const anonymous = await register({ client_name: "Totally Your Bank", redirect_uris: ["https://bank.example.test/cb"] });
    const second = await text(await consentPage(anonymous.json.client_id, "https://bank.example.test/cb"));
    expect(second).toContain("Unverified app");
    expect(second).not.toContain("Verified:");
  });

  it("drops the mark when the verification has expired", async () => {
    const owner = await personWithIdentity(server);
    const host = `expiring-${VERIFIED_HOST}`;
    const { clientId, verificationId } = await verifiedClient(owner, host);
    const past = new Date(Date.now() - 1000);
    await server.db.updateTable("domainVerification").set({ expiresAt: past }).where("id", "=", verificationId).execute();
    const shown = await text(await consentPage(clientId, `https://${host}/callback`));
    expect(shown).toContain("Unverified app");
    expect(shown).not.toContain("Verified:");
  });

  it("warns when the code goes to a loopback address", async () => {
    const native = await register({ client_name: "Local Tool", application_type: "native", redirect_uris: [REDIRECT] });
    const page = await consentPage(native.json.client_id, REDIRECT);
    const shown = await text(page);
    expect(shown).toContain(`you will be sent back to ${new URL(REDIRECT).origin}`);
    expect(shown).toContain("Unverified app");
    await expect(page.getByRole("note").innerText()).resolves.toContain("on your own device (localhost)");
  });

  it("lists the resources (RFC 8707) the access is for, ours in words and any other by host and URL", async () => {
    const native = await register({ client_name: "Agent", application_type: "native", redirect_uris: [REDIRECT] });
    const mcp = `${server.url}/mcp`;
    const userinfo = `${server.url}/api/auth/oauth2/userinfo`;
    const page = await consentPage(native.json.client_id, REDIRECT, ["https://tools.example.test/mcp", mcp, userinfo]);
    const items = await page.locator("ul.resources li").allInnerTexts();
    expect(items).toEqual([
      "tools.example.test (https://tools.example.test/mcp)",
      `This service's MCP server (your identities, backup status and apps) (${mcp})`,
      `This service's account details, as allowed above (userinfo) (${userinfo})`,
    ]);
    await expect(page.locator("ul.resources strong").innerText()).resolves.toBe("tools.example.test");
    expect(await text(page)).toContain("Each of these services will be able to act with this access");


    // Without `resource`, no list.
    const plain = await consentPage(native.json.client_id, REDIRECT);
    expect(await plain.locator("ul.resources").count()).toBe(0);
  });
});

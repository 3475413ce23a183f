import * as oidc from "openid-client";
import { beforeAll, describe, expect, it } from "vitest";
import { axeViolations } from "../helpers/axe.js";
import { fillByLabel, submitWith } from "../helpers/browser.js";
import { approvalLink, CIBA_GRANT, oauthError, registerCibaClient, type CibaClient } from "../helpers/ciba.js";
import { signInThroughPage, signUpWithForm, useBrowser, useTestServer } from "../helpers/fixtures.js";
import { mailbox } from "../helpers/mailbox.js";
import { signUp, token } from "../helpers/oauth.js";
import { basic } from "../helpers/token-exchange.js";
import { freePort } from "../helpers/server.js";

/**
 * OpenID CIBA as the person meets it: the e-mail's link, the account page's list, the approval
 * page in Chromium. WebAuthn refuses IP-address origins (the passkey test), so AUTH_URL is
 * http://localhost:<port>.
 */
const box = mailbox();
const server = useTestServer(async () => {
  const port = await freePort();
  return { PORT: String(port), AUTH_URL: `http://localhost:${port}`, CIBA_POLL_INTERVAL: "1" };
}, { mailer: box.mailer });
const browser = useBrowser();

let client: CibaClient;
beforeAll(async () => {
  client = await registerCibaClient(server, { client_name: "Travel Agent" }, "Travel Agent");
});

describe("the approval page", () => {
  it("from the e-mail: signs in, shows the client, the binding message and the scopes, and approves", async () => {
    const person = await signUp(server);
    const started = await oidc.initiateBackchannelAuthentication(client.config, { scope: "openid email", login_hint: person.email, binding_message: "Book flight LH 400" });
    const polling = oidc.pollBackchannelAuthenticationGrant(client.config, started);

    const page = await browser.page();
    const link = await approvalLink(box, person.email, "Travel Agent");
    await page.goto(link.href);
    // Not signed in: the sign-in page, which comes back here afterwards.
    await signInThroughPage(page, person);
    expect(new URL(page.url()).pathname).toBe(link.pathname);
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Approve Travel Agent?");
    await expect(page.locator("#binding-message").textContent()).resolves.toBe("Book flight LH 400");
    await expect(page.locator("ul.scopes").textContent()).resolves.toMatch(/e-mail address/);
    await expect(axeViolations(page)).resolves.toEqual([]);
    await submitWith(page, "Approve");
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Request approved");
    await expect(axeViolations(page)).resolves.toEqual([]);

    const tokens = await polling;
    expect(tokens.claims()).toMatchObject({ sub: person.user.id, aud: client.id });
    // Answered: the page has nothing more to decide.
    await page.goto(link.href);
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Request not found");
  });

  it("from the account page's list: denies, and the client learns it", async () => {
    const page = await browser.page();
    const person = await signUpWithForm(server, page, { name: "Denying Person" });
    const started = await oidc.initiateBackchannelAuthentication(client.config, { scope: "openid", login_hint: person.email, binding_message: "Transfer 900 USD" });
    await page.goto(`${server.url}/account/apps`);
    const section = page.locator("#approvals");
    await expect(section.textContent()).resolves.toContain("Transfer 900 USD");
    await expect(axeViolations(page)).resolves.toEqual([]);
    await Promise.all([page.waitForURL((u) => u.pathname.startsWith("/ciba/")), section.getByRole("link", { name: "Review the request of Travel Agent" }).click()]);
    await submitWith(page, "Deny");
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Request denied");
    await expect(oauthError(oidc.pollBackchannelAuthenticationGrant(client.config, started))).resolves.toBe("access_denied");
    await page.goto(`${server.url}/account/apps`);
    await expect(page.locator("#approvals").textContent()).resolves.toContain("No application is waiting for your approval.");
  });

  it("shows a stranger nothing of someone else's request", async () => {
    const person = await signUp(server);
    const stranger = await signUp(server);
    await oidc.initiateBackchannelAuthentication(client.config, { scope: "openid", login_hint: person.email, binding_message: "Secret plan" });
    const link = await approvalLink(box, person.email, "Travel Agent");
    const page = await browser.page();
    await page.goto(link.href);
    await signInThroughPage(page, stranger);
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Request not found");
    await expect(page.content()).resolves.not.toContain("Secret plan");
    await expect(axeViolations(page)).resolves.toEqual([]);
  });

  it("with acr_values phr: refuses a password session's approval, takes it after a passkey sign-in", async () => {
    const { page } = await browser.pageWithAuthenticator();
    const person = await signUpWithForm(server, page, { name: "Strong Person" });
    // A passkey first (the profile and security page's "Add a passkey").
    await page.goto(`${server.url}/account/security`);
    await page.locator("#passkey-add").waitFor({ state: "visible" });
    await fillByLabel(page, "Name for the new passkey", "Laptop");
    await Promise.all([page.waitForURL((u) => u.searchParams.get("notice") === "passkey-added"), page.getByRole("button", { name: "Add a passkey", exact: true }).click()]);

    const started = await oidc.initiateBackchannelAuthentication(client.config, { scope: "openid", login_hint: person.email, acr_values: "phr", binding_message: "Pay 1000 USD" });
    const link = await approvalLink(box, person.email, "Travel Agent");
    await page.goto(link.href);
    await expect(page.getByRole("status").textContent()).resolves.toContain("must be approved with a passkey or your identity key");
    await submitWith(page, "Approve");
    await expect(page.getByRole("alert").textContent()).resolves.toContain("passkey or your identity key");
    await expect(axeViolations(page)).resolves.toEqual([]);
    // Still waiting for the person.
    const pending = await token(server, { grant_type: CIBA_GRANT, auth_req_id: started.auth_req_id }, basic(client.id, client.secret));
    expect(pending.json.error).toBe("authorization_pending");

    // Sign in with the passkey, then back to the request from the account page.
    await page.goto(`${server.url}/sign-in`);
    await Promise.all([page.waitForURL((u) => u.pathname === "/"), page.getByRole("button", { name: "Sign in with a passkey", exact: true }).click()]);
    await page.goto(`${server.url}/account/apps`);
    await Promise.all([page.waitForURL((u) => u.pathname === link.pathname), page.locator("#approvals").getByRole("link", { name: "Review the request of Travel Agent" }).click()]);
    await expect(page.locator(".notice[role=status]").count()).resolves.toBe(0);
    await submitWith(page, "Approve");
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Request approved");
    const tokens = await oidc.pollBackchannelAuthenticationGrant(client.config, started);
    expect(tokens.claims()!.sub).toBe(person.userId);
  });
});

import { describe, expect, it } from "vitest";
import type { CertificateTypeDescription as TypeEntry } from "../../plugins/certificates/catalog.js";
import { useBrowser, useTestServer } from "../helpers/fixtures.js";

const server = useTestServer();

/**
 * Every type ID, fixed forever (spec, Versioning 4): a wallet holding a certificate finds its
 * type by this string. Never edit a value here; a changed type is a new key or schemaVersion.
 */
const PINNED_TYPE_IDS: Record<string, string> = {
  emailCert: "atqlBoFCBngvXBC63QsJAS82+Ke28r5AKLxAUof8hC0=",
  xCert: "UPyqje+O6XjM5uuO4myIAKRn1Sj1FALwSw/SUVCozsw=",
  discordCert: "/9CWmAMlJO9ZO6Sp1qVZoPxyi2DRCG/l8CFv1BFkvZE=",
  googleCert: "P7vONBwzBS8DSQwUjYbe6DSym5IaxR6YQjIhgttlEfA=",
  phoneCert: "/gc+nz/bsEzFJDktPz17MZQyzkRpuHIXCZFaBkAorao=",
  handleCert: "5XsdcFt/VEV/FBRUCjeZgLQfPYNbPXB246cXedT4W9s=",
  githubCert: "MldsZGNGu7jjOootK1Tokcmg2IsV7195m5/50dlw0BM=",
  appleCert: "mhZ61Al36hjCK/PindsTe4QRoZEAXjjPkQ5U3wxpcQM=",
  bapWalletBinding: "gUHIDUgRKje3oMHZ+i/ezpv1yv8X2xqTXBPDEMNIYN4=",
  providerAssurance: "cwOZe8uAL1H6kHKa987Sd+O8fs8zXmsbwPdK6YrosV4=",
  organizationMembership: "zIB/z2Yb1WKiAXJY5aWW2YbVQdduOkRMLU3B2NMagno=",
  oauthAppOwnership: "5WtbfnsUpapdHpehbsKMmGDkQ7dxW8GldOVwUuJiLcY=",
  verifiedDomain: "sUzPHU3LdjzvszoZbVEALYGpteUmkMWohjSdPB1tjh8=",
};

/** The spec's "Certificate catalog entry" table: key, owner, fields (names are immutable too). */
const SPEC_TABLE: Record<string, { owner: string; fields: string[] }> = {
  emailCert: { owner: "Ecosystem", fields: ["email"] },
  xCert: { owner: "Ecosystem", fields: ["userName", "profilePhoto"] },
  discordCert: { owner: "Ecosystem", fields: ["userName", "profilePhoto"] },
  googleCert: { owner: "Ecosystem", fields: ["email", "name", "profilePhoto"] },
  phoneCert: { owner: "Ecosystem", fields: ["phoneNumber"] },
  handleCert: { owner: "Standard", fields: ["domain", "handle"] },
  githubCert: { owner: "Service", fields: ["accountId", "userName", "profileUrl", "profilePhoto", "verifiedAt"] },
  appleCert: { owner: "Service", fields: ["accountId", "verifiedAt"] },
  bapWalletBinding: { owner: "Service", fields: ["bapId", "verifiedAt"] },
  providerAssurance: { owner: "Service", fields: ["provider", "accountId", "assuranceLevel", "verifiedAt", "expiresAt"] },
  organizationMembership: { owner: "Service", fields: ["organizationId", "role", "validFrom", "validUntil"] },
  oauthAppOwnership: { owner: "Service", fields: ["clientId", "organizationId", "verifiedAt"] },
  verifiedDomain: { owner: "Service", fields: ["domain", "verificationMethod", "verifiedAt", "expiresAt"] },
};


async function catalog(): Promise<TypeEntry[]> {
  const res = await server.api("/api/certificates/types");
  expect(res.status).toBe(200);
  return res.json.types;
}

describe("GET /api/certificates/types", () => {
  it("is public, JSON and cacheable by anyone", async () => {
    const res = await fetch(`${server.url}/api/certificates/types`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.headers.get("cache-control")).toMatch(/^public, max-age=\d+$/);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("answers every type ID exactly as pinned: 13 keys, each a Base64 string of 32 bytes", async () => {
    const types = await catalog();
    expect(Object.fromEntries(types.map((t) => [t.key, t.typeId]))).toEqual(PINNED_TYPE_IDS);
    for (const { typeId } of types) {
      expect(typeId).toMatch(/^[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(typeId, "base64")).toHaveLength(32);
    }
    expect(new Set(types.map((t) => t.typeId)).size).toBe(13);
  });

  it("gives each key the spec's owner and fields, in order, with a friendly name for each field", async () => {
    const types = await catalog();
    expect(types.map((t) => t.key)).toEqual(Object.keys(SPEC_TABLE));
    for (const t of types) {
      expect({ owner: t.owner, fields: t.fields }, t.key).toEqual(SPEC_TABLE[t.key]);
      expect(Object.keys(t.fieldFriendlyNames)).toEqual(t.fields);
      for (const name of Object.values(t.fieldFriendlyNames)) expect(name).toMatch(/^[A-Z][\w ]+$/);
      expect(t.schemaVersion).toBe(1);
      expect(t.displayName.length).toBeGreaterThan(0);
      expect(t.description.length).toBeGreaterThan(10);
    }
  });

  it("points documentationUrl at the type's landing page and iconUrl at an SVG, both served here", async () => {
    for (const t of await catalog()) {
      expect(t.documentationUrl).toBe(`${server.url}/certificates/${t.slug}`);
      const page = await fetch(t.documentationUrl);
      expect(page.status, t.documentationUrl).toBe(200);
      expect(await page.text()).toContain(t.typeId);
      const icon = await fetch(t.iconUrl);
      expect(icon.status, t.iconUrl).toBe(200);
      expect(icon.headers.get("content-type")).toBe("image/svg+xml");
      expect(await icon.text()).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    }
  });
});

describe("certificate landing pages", () => {
  it("render a type for people: name, description, owner, fields by friendly name, type ID, documentation link", async () => {
    const res = await server.api("/certificates/github");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = res.text;
    expect(html).toContain("<title>GitHub account certificate</title>");
    expect(html).toContain("Proves control of a GitHub account");
    expect(html).toContain("Service: a type this service defines and issues.");
    for (const [friendly, field] of [
      ["GitHub account ID", "accountId"],
      ["Profile URL", "profileUrl"],
      ["Verified at", "verifiedAt"],
    ]) expect(html).toMatch(new RegExp(`<td>${friendly}</td><td><code>${field}</code></td>`));
    expect(html).toContain(`<code id="type-id">${PINNED_TYPE_IDS.githubCert}</code>`);
    expect(html).toContain('<a href="/certificates/github">/certificates/github</a>');
  });

  it("list every type at /certificates", async () => {
    const res = await server.api("/certificates");
    expect(res.status).toBe(200);
    for (const t of await catalog()) expect(res.text).toContain(`<a href="/certificates/${t.slug}">${t.displayName}</a>`);
  });

  it("answer an unknown slug (or a catalog key that is not a slug) with the 404 page", async () => {
    for (const path of ["/certificates/nope", "/certificates/emailCert", "/certificates/nope/icon.svg"]) {
      const res = await server.api(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("content-type")).toContain("text/html");
      expect(res.text).toContain("There is no certificate type by that name.");
    }
  });

  describe("in Chromium", () => {
    const browser = useBrowser();
    it("shows the type and loads its icon under the pages' Content-Security-Policy", async () => {
      const page = await browser.page();
      const refused: string[] = [];
      page.on("console", (message) => {
        if (message.type() === "error" && /Content.Security.Policy/i.test(message.text())) refused.push(message.text());
      });
      await page.goto(`${server.url}/certificates/email`);
      await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toContain("Email address certificate");
      const icon = page.locator("h1 img.icon");
      await icon.evaluate((img: HTMLImageElement) => (img.complete ? null : new Promise((done) => img.addEventListener("load", done, { once: true }))));
      expect(await icon.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(64);
      expect(refused).toEqual([]);
    });
  });
});

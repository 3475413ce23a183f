import { describe, expect, it } from "vitest";
import { matchesRoutePattern, type DeprecatedRoute } from "../../lib/deprecations.js";
import { useTestServer } from "../helpers/fixtures.js";

/** A table as an operator would write one; the production table (lib/deprecations.ts) is empty. */
const DEPRECATIONS: DeprecatedRoute[] = [
  { method: "GET", path: "/api/certificates/types", deprecatedAt: new Date("2025-01-01T00:00:00Z"), sunsetAt: new Date("2030-06-30T23:59:59Z"), note: "Read the catalog from /api/certificates/types/v2." },
  { method: "*", path: "/api/backup/:whatever", deprecatedAt: new Date("2025-02-01T00:00:00Z") },
];

describe("the agent orientation document, /llms.txt", () => {
  const server = useTestServer();

  it("is plain UTF-8 text that says what the service is and how an agent gets in", async () => {
    const res = await fetch(`${server.url}/llms.txt`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    const text = await res.text();
    expect(text).toMatch(/^# Identity provider\n/);
    expect(text).toContain(`Issuer: ${server.url}\n`);
    expect(text).toContain(`POST ${server.url}/api/auth/oauth2/register`);
    expect(text).toContain(`POST ${server.url}/api/auth/sign-in/sigma`);
    expect(text).toContain("X-Auth-Token");
    expect(text).toContain(`POST ${server.url}/api/auth/host/create`);
    expect(text).toContain(`POST ${server.url}/api/auth/host/enroll`);
    expect(text).toContain(`POST ${server.url}/api/agents/hosts/<hostId>/oauth-client`);
    expect(text).toContain(`POST ${server.url}/api/auth/device/code`);
    expect(text).toContain("urn:ietf:params:oauth:grant-type:device_code");
    expect(text).toContain("DPoP-Nonce");
    expect(text).toContain(`${server.url}/api/openapi.json`);
    expect(text).toContain("Scopes: openid, profile, email, offline_access, backup:read, backup:write");
    expect(text).toMatch(/## Breaking changes\n.*Deprecation header \(RFC 9745.*Sunset header \(RFC 8594/);
    expect(text).toContain("Deprecated routes:\nNone at present.");
  });

  it("is what discovery names as service_documentation", async () => {
    for (const doc of ["openid-configuration", "oauth-authorization-server"]) {
      const metadata = (await server.api(`/.well-known/${doc}`)).json;
      expect(metadata.service_documentation, doc).toBe(`${server.url}/llms.txt`);
    }
  });

  it("answers no route with Deprecation or Sunset while the table is empty", async () => {
    for (const path of ["/api/certificates/types", "/llms.txt", "/.well-known/openid-configuration", "/api/backup/status"]) {
      const res = await fetch(server.url + path);
      expect(res.headers.get("deprecation"), path).toBeNull();
      expect(res.headers.get("sunset"), path).toBeNull();
    }
  });
});

describe("Deprecation and Sunset headers from the deprecated-routes table", () => {
  const server = useTestServer({}, { deprecations: DEPRECATIONS });

  it("mark a listed route: RFC 9745 Deprecation, RFC 8594 Sunset and a Link to the announcement", async () => {
    const res = await fetch(`${server.url}/api/certificates/types`);
    expect(res.status).toBe(200);
    expect(res.headers.get("deprecation")).toBe(`@${Date.UTC(2025, 0, 1) / 1000}`);
    expect(res.headers.get("sunset")).toBe("Sun, 30 Jun 2030 23:59:59 GMT");
    expect(res.headers.get("link")).toBe(`<${server.url}/llms.txt>; rel="deprecation"; type="text/plain"`);
  });

  it("mark every answer of a pattern, errors included, and leave Sunset out when no date is set", async () => {
    const res = await fetch(`${server.url}/api/backup/status`);
    expect(res.status).toBe(401);
    expect(res.headers.get("deprecation")).toBe(`@${Date.UTC(2025, 1, 1) / 1000}`);
    expect(res.headers.get("sunset")).toBeNull();
  });

  it("leave unlisted routes and other methods of a listed path alone", async () => {
    for (const [method, path] of [
      ["GET", "/api/certificates"],
      ["GET", "/.well-known/openid-configuration"],
      ["POST", "/api/certificates/types"],
      ["GET", "/api/backup"],
    ] as const) {
      const res = await fetch(server.url + path, { method });
      expect(res.headers.get("deprecation"), `${method} ${path}`).toBeNull();
      expect(res.headers.get("sunset"), `${method} ${path}`).toBeNull();
    }
  });

  it("are announced in /llms.txt with their dates", async () => {
    const text = await (await fetch(`${server.url}/llms.txt`)).text();
    expect(text).toContain("- GET /api/certificates/types: deprecated since 2025-01-01; removed on 2030-06-30. Read the catalog from /api/certificates/types/v2.\n");
    expect(text).toContain("- * /api/backup/:whatever: deprecated since 2025-02-01.\n");
  });
});

describe("route patterns", () => {
  it("match literal segments, one segment per :name, and the rest after a final *", () => {
    expect(matchesRoutePattern("/api/backup", "/api/backup")).toBe(true);
    expect(matchesRoutePattern("/api/backup", "/api/backup/status")).toBe(false);
    expect(matchesRoutePattern("/api/backup/:id", "/api/backup/status")).toBe(true);
    expect(matchesRoutePattern("/api/backup/:id", "/api/backup/")).toBe(false);
    expect(matchesRoutePattern("/api/backup/:id", "/api/backup/a/b")).toBe(false);
    expect(matchesRoutePattern("/api/legacy/*", "/api/legacy/a/b")).toBe(true);
    expect(matchesRoutePattern("/api/legacy/*", "/api/legacy")).toBe(false);
    expect(matchesRoutePattern("/api/legacy/*", "/api/legacyx/a")).toBe(false);
  });
});

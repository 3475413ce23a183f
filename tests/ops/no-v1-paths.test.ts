import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { signUp } from "../helpers/oauth.js";

/**
 * Spec, Versioning 2: the mount is the current surface, and protocol paths are stable OAuth/OIDC
 * URLs that are not rewritten under /v1/. Nothing answers there, signed in or not.
 */
const server = useTestServer();

const V1_PATHS = [
  "/v1/api/auth/get-session",
  "/v1/api/auth/oauth2/token",
  "/v1/api/auth/oauth2/authorize",
  "/v1/api/auth/oauth2/userinfo",
  "/v1/.well-known/openid-configuration",
  "/v1/api/backup/status",
  "/v1/api/user/bap-ids",
  "/v1/api/certificates/types",
  "/v1/api/openapi.json",
  "/v1/",
  "/v1",
];

describe("no /v1/ paths", () => {
  it("answers 404 for the /v1/ forms of the routes, by GET and POST, with and without a session", async () => {
    const person = await signUp(server);
    for (const path of V1_PATHS) {
      for (const cookie of [undefined, person.cookie]) {
        const get = await server.api(path, { cookie });
        expect(get.status, `GET ${path}`).toBe(404);
        const post = await server.api(path, { cookie, body: {} });
        expect(post.status, `POST ${path}`).toBe(404);
      }
    }
    // The unversioned routes are there.
    expect((await server.api("/api/auth/get-session", { cookie: person.cookie })).status).toBe(200);
    expect((await server.api("/.well-known/openid-configuration")).status).toBe(200);
  });

  it("publishes no /v1/ URL in discovery or the OpenAPI document", async () => {
    const discovery = await server.api("/.well-known/openid-configuration");
    expect(JSON.stringify(discovery.json)).not.toMatch(/\/v1\//);
    const openapi = await server.api("/api/openapi.json");
    expect(openapi.status).toBe(200);
    expect(Object.keys(openapi.json.paths).filter((p) => p.startsWith("/v1"))).toEqual([]);
  });
});

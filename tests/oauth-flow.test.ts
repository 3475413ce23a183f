import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fullCodeFlow, token } from "./helpers/oauth.js";
import { startTestServer, type TestServer } from "./helpers/server.js";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe("authorization code + PKCE", () => {
  it("issues tokens for a code and refuses a replayed code", async () => {
    const flow = await fullCodeFlow(server);
    console.log(flow.auth.url.toString(), flow.tokens);
    expect(flow.tokens.status).toBe(200);
  });
});

import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";

/** Every answer our routes render names its request (X-Request-Id), for the log and support. */

const server = useTestServer();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("X-Request-Id", () => {
  it("is a new id on a page, a problem and a REST answer, different each time", async () => {
    const ids = [];
    for (const path of ["/sign-in", "/api/no-such-route", "/api/user/bap-ids"]) {
      const res = await server.api(path);
      expect(res.status).toBeLessThan(500);
      ids.push(res.headers.get("x-request-id"));
    }
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(3);
  });

  it("keeps a caller's short, plain id and replaces one that is long or carries other characters", async () => {
    const kept = await server.api("/sign-in", { headers: { "x-request-id": "lb-7f3a_9=" } });
    expect(kept.headers.get("x-request-id")).toBe("lb-7f3a_9=");
    for (const bad of ["x".repeat(65), "a b", "id\"<script>"]) {
      const res = await server.api("/sign-in", { headers: { "x-request-id": bad } });
      expect(res.headers.get("x-request-id")).toMatch(UUID);
    }
  });
});

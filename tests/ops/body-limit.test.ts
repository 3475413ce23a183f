import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { declaredBodyLimit } from "../../lib/request-body.js";

/**
 * declaredBodyLimit (lib/request-body.ts) decides from the headers where they tell it, without
 * asking the Request for its body: @hono/node-server then builds the full Web Request (an
 * AbortController undici follows with a WeakRef and a FinalizationRegistry), for every request.
 */
function appWithLimit(maxSize: number) {
  return new Hono().use(declaredBodyLimit(maxSize, (c) => c.text("too large", 413))).all("/", async (c) => c.text(`read ${(await c.req.text()).length}`));
}

/** `req` with a count of the reads of its `body`. */
function watched(req: Request): { req: Request; bodyReads: () => number } {
  let reads = 0;
  const proxy = new Proxy(req, {
    get(target, key) {
      if (key === "body") reads++;
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { req: proxy, bodyReads: () => reads };
}

/** A body sent chunked: no Content-Length. */
function chunked(text: string): Request {
  const body = new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text));
      controller.close();
    },
  });
  return new Request("http://localhost/", { method: "POST", body, duplex: "half" } as RequestInit);
}

describe("declaredBodyLimit", () => {
  it("passes a GET without reading its body", async () => {
    const { req, bodyReads } = watched(new Request("http://localhost/"));
    const res = await appWithLimit(10).fetch(req);
    expect(await res.text()).toBe("read 0");
    // The handler reads through text(), not the body stream: any read of `body` was the limit's.
    expect(bodyReads()).toBe(0);
  });

  it("refuses a GET that declares a body over the limit, as any other method", async () => {
    const { req, bodyReads } = watched(new Request("http://localhost/", { headers: { "content-length": "11" } }));
    expect((await appWithLimit(10).fetch(req)).status).toBe(413);
    expect(bodyReads()).toBe(0);
  });

  it("refuses a declared length over the limit without reading the body", async () => {
    const { req, bodyReads } = watched(new Request("http://localhost/", { method: "POST", body: "x".repeat(11), headers: { "content-length": "11" } }));
    const res = await appWithLimit(10).fetch(req);
    expect(res.status).toBe(413);
    expect(bodyReads()).toBe(0);
  });

  it("passes a declared length within the limit to the handler, the body read by the handler only", async () => {
    const { req, bodyReads } = watched(new Request("http://localhost/", { method: "POST", body: "x".repeat(10), headers: { "content-length": "10" } }));
    const res = await appWithLimit(10).fetch(req);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("read 10");
    expect(bodyReads()).toBe(0);
  });

  it("counts a chunked body as it streams: over the limit 413, within it the handler reads it all", async () => {
    expect((await appWithLimit(10).fetch(chunked("x".repeat(11)))).status).toBe(413);
    const res = await appWithLimit(10).fetch(chunked("x".repeat(7)));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("read 7");
  });
});

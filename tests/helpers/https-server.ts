import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll } from "vitest";
import { useTempDirs } from "./fixtures.js";

const run = promisify(execFile);

/**
 * An HTTPS server on loopback with a certificate made for `localhost` at test time (the
 * openssl CLI; self-signed, so it is its own CA). `caFile` is the PEM a fetcher must be told
 * to trust (OUTBOUND_EXTRA_CA_FILE); without it TLS verification refuses the server.
 */
export interface HttpsFixture {
  readonly port: number;
  readonly caFile: string;
  /** Every path requested, in order. */
  readonly requests: readonly string[];
  /** What a GET of `path` answers: a body with 200, or a status and headers. */
  serve(path: string, answer: string | { status: number; headers?: Record<string, string>; body?: string | Buffer }): void;
}

async function selfSignedLocalhost(dir: string) {
  const key = join(dir, "key.pem");
  const cert = join(dir, "cert.pem");
  await run("openssl", [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
    "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost",
    "-addext", "subjectAltName=DNS:localhost", "-addext", "basicConstraints=critical,CA:TRUE",
  ]);
  return { key: readFileSync(key), cert: readFileSync(cert), certFile: cert };
}

export function useHttpsServer(): HttpsFixture {
  const tempDir = useTempDirs("idp-https-");
  const routes = new Map<string, { status: number; headers?: Record<string, string>; body?: string | Buffer }>();
  const requests: string[] = [];
  let server: Server | undefined;
  let port = 0;
  let caFile = "";
  beforeAll(async () => {
    const { key, cert, certFile } = await selfSignedLocalhost(tempDir());
    caFile = certFile;
    server = createServer({ key, cert }, (req, res) => {
      const path = new URL(req.url ?? "/", "https://localhost").pathname;
      requests.push(path);
      const found = routes.get(path) ?? { status: 404, body: "not here" };
      res.writeHead(found.status, { "content-type": "text/plain", ...found.headers });
      res.end(found.body ?? "");
    });
    await new Promise<void>((resolve) => server!.listen(0, "localhost", resolve));
    const address = server.address();
    port = typeof address === "object" && address ? address.port : 0;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  });
  return {
    get port() {
      return port;
    },
    get caFile() {
      return caFile;
    },
    get requests() {
      return [...requests];
    },
    serve(path, answer) {
      routes.set(path, typeof answer === "string" ? { status: 200, body: answer } : answer);
    },
  };
}

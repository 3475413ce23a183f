import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/**
 * Bitcoin-Auth tokens made on a worker thread, for a load generator that measures latency.
 * bitcoin-auth signs with @bsv/sdk's JavaScript point arithmetic: about 15 ms a token on a slow
 * machine. Made on the driver's own event loop, each one would hold back the answers of every
 * other request in flight, and their latency would count the driver's stall as the server's.
 * The token is made before its request's clock starts, as before; only the thread differs.
 */
export interface Signer {
  /** `getAuthToken({ privateKeyWif, requestPath, body })`, made on the worker. */
  sign(privateKeyWif: string, requestPath: string, body: string): Promise<string>;
  close(): Promise<void>;
}

const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const { getAuthToken } = require(workerData.bitcoinAuth);
parentPort.on("message", ({ id, privateKeyWif, requestPath, body }) => {
  try {
    parentPort.postMessage({ id, token: getAuthToken({ privateKeyWif, requestPath, body }) });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.message || err) });
  }
});
`;

export function workerSigner(): Signer {
  const bitcoinAuth = createRequire(import.meta.url).resolve("bitcoin-auth");
  const worker = new Worker(WORKER, { eval: true, workerData: { bitcoinAuth } });
  const waiting = new Map<number, { ok: (token: string) => void; fail: (err: Error) => void }>();
  let next = 0;
  worker.on("message", ({ id, token, error }: { id: number; token?: string; error?: string }) => {
    const w = waiting.get(id);
    waiting.delete(id);
    if (token !== undefined) w?.ok(token);
    else w?.fail(new Error(`signer: ${error}`));
  });
  worker.on("error", (err) => {
    for (const w of waiting.values()) w.fail(err);
    waiting.clear();
  });
  return {
    sign(privateKeyWif, requestPath, body) {
      return new Promise((ok, fail) => {
        const id = next++;
        waiting.set(id, { ok, fail });
        worker.postMessage({ id, privateKeyWif, requestPath, body });
      });
    },
    async close() {
      await worker.terminate();
    },
  };
}

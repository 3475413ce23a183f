import type { CibaOptions } from "./options.js";
import type { CibaRequest } from "./store.js";

const DEFAULT_RETRY_DELAYS = [1000, 5000, 15000] as const;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * CIBA §10.2 ping callback: once the person has answered, POST `{"auth_req_id"}` to the client's
 * registered notification endpoint with `Authorization: Bearer <client_notification_token>`,
 * through the guarded fetcher (the endpoint is someone else's URL). Any 2xx is delivery; a
 * refused target, a network failure or another status is tried again after each delay, then
 * given up (the client can still poll). Runs in the background.
 */
export function sendPing(options: CibaOptions, request: CibaRequest, authReqId: string, endpoint: string): void {
  if (request.deliveryMode !== "ping" || !request.notificationToken) return;
  const delays = options.pingRetryDelays ?? DEFAULT_RETRY_DELAYS;
  void (async () => {
    for (let attempt = 0; attempt <= delays.length; attempt++) {
      if (attempt > 0) await sleep(delays[attempt - 1]!);
      try {
        const res = await options.safeFetch(endpoint, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${request.notificationToken}` },
          body: JSON.stringify({ auth_req_id: authReqId }),
        });
        if (res.status >= 200 && res.status < 300) return;
        options.logger.warn("ciba: ping answered with an error", { status: res.status, request: request.id, attempt });
      } catch (err) {
        options.logger.warn("ciba: ping failed", { err: err instanceof Error ? err.message : String(err), request: request.id, attempt });
      }
    }
  })();
}

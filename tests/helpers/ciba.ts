import * as oidc from "openid-client";
import { registerClient } from "./oauth.js";
import type { Mailbox } from "./mailbox.js";
import { linkIn } from "./mailbox.js";
import type { TestServer } from "./server.js";

/** OpenID CIBA as an agent does it: a confidential client registered for the grant, openid-client configured as it. */
export const CIBA_GRANT = "urn:openid:params:grant-type:ciba";
const insecure = { execute: [oidc.allowInsecureRequests] };

export interface CibaClient {
  id: string;
  secret: string;
  config: oidc.Configuration;
}

export async function registerCibaClient(target: TestServer, metadata: Record<string, unknown> = {}, name = "Shopping Agent"): Promise<CibaClient> {
  const client = await registerClient(target, {
    client_name: name,
    application_type: "web",
    token_endpoint_auth_method: "client_secret_basic",
    grant_types: ["authorization_code", "refresh_token", CIBA_GRANT],
    backchannel_token_delivery_mode: "poll",
    ...metadata,
  });
  const secret = client.client_secret!;
  const config = await oidc.discovery(new URL(target.url), client.client_id, secret, oidc.ClientSecretBasic(secret), insecure);
  return { id: client.client_id, secret, config };
}

/** The request's page, from the mail the person got about it. */
export async function approvalLink(box: Mailbox, email: string, clientName = "Shopping Agent"): Promise<URL> {
  return linkIn(await box.latest(email, new RegExp(`^${clientName} asks for your approval$`)));
}

/** The request id in an approval link (/ciba/<id>). */
export const requestIdOf = (link: URL) => decodeURIComponent(link.pathname.split("/").at(-1)!);

/** The person's decision, as the page sends it (POST /api/auth/ciba/decide with their session). */
export function decide(target: TestServer, cookie: string, id: string, decision: "approve" | "deny") {
  return target.api("/api/auth/ciba/decide", { cookie, body: { id, decision } });
}

/** The OAuth error code of a rejected openid-client call. */
export async function oauthError(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (err) {
    return (err as { error?: string }).error ?? (err as { cause?: { error?: string } }).cause?.error ?? String(err);
  }
  return undefined;
}

import { AsyncLocalStorage } from "node:async_hooks";
import type { Mail } from "../../lib/mailer.js";
import type { PageBrand } from "./brand.js";

/**
 * The e-mails of an authorization flow carry the client's brand. The pages know the flow (its
 * signed request names the client) and replay the form against better-auth; better-auth then
 * calls our mail callbacks (auth.config.ts) inside that call. The brand rides along in an
 * AsyncLocalStorage set by the page around the replay, so no request field that any API caller
 * could set decides what an e-mail looks like.
 */
const flowBrand = new AsyncLocalStorage<PageBrand>();

/** Runs `send` (a replay that may mail) with `brand` as the flow's brand; none: as it is. */
export function withMailBrand<T>(brand: PageBrand | null, send: () => Promise<T>): Promise<T> {
  return brand ? flowBrand.run(brand, send) : send();
}

/**
 * `mail` as the flow's brand dresses it: the client's name in the subject and the text, and its
 * support link; white-label (Pro) sends it under the client's name instead of ours.
 */
export function brandMail(mail: Mail, brand: PageBrand | undefined = flowBrand.getStore()): Mail {
  if (!brand) return mail;
  const help = brand.supportUrl ? `\n\nHelp with ${brand.displayName}: ${brand.supportUrl}` : "";
  return {
    ...mail,
    subject: `${brand.displayName}: ${mail.subject}`,
    text: `${brand.displayName}\n\n${mail.text}${help}`,
    ...(brand.whiteLabel ? { fromName: brand.displayName } : {}),
  };
}

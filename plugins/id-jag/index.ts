import type { OAuthExtensionGrantHandler, OAuthProviderExtension } from "@better-auth/oauth-provider";
import type { BetterAuthPlugin } from "better-auth";
import { issueAssertion } from "./issue.js";
import { ID_JAG_TOKEN_TYPE, JWT_BEARER_GRANT, type IdJagOptions } from "./options.js";
import { redeemAssertion } from "./redeem.js";
import { idJagRegistrationHooks } from "./registration.js";

export { ID_JAG_TOKEN_TYPE, JWT_BEARER_GRANT, type IdJagOptions } from "./options.js";

/**
 * Identity Assertion JWT Authorization Grants (draft-ietf-oauth-identity-assertion-authz-grant),
 * both sides. `issue` is the token exchange branch for `requested_token_type` id-jag
 * (./issue.ts; plugins/token-exchange hands such requests to it), present when ID_JAG_AUDIENCES
 * names any audience. `extension` is oauth-provider's: the JWT bearer grant (./redeem.ts) when
 * ID_JAG_TRUSTED_ISSUERS names any issuer (so `grant_types_supported` lists it only then), and
 * `identity_chaining_requested_token_types_supported` when assertions are issued. `plugin`
 * carries the `id_jag_clients` registration metadata (./registration.ts).
 */
export function idJag(options: IdJagOptions): { issue?: OAuthExtensionGrantHandler; extension: OAuthProviderExtension; plugin: BetterAuthPlugin } {
  const issuing = options.audiences.length > 0;
  const registration = idJagRegistrationHooks();
  return {
    ...(issuing ? { issue: issueAssertion(options) } : {}),
    extension: {
      ...(options.trustedIssuers.length ? { grants: { [JWT_BEARER_GRANT]: redeemAssertion(options) } } : {}),
      ...(issuing ? { metadata: () => ({ identity_chaining_requested_token_types_supported: [ID_JAG_TOKEN_TYPE] }) } : {}),
    },
    plugin: { id: "id-jag", hooks: { before: [registration.before], after: [registration.after] } },
  };
}

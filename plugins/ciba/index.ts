import type { OAuthProviderExtension } from "@better-auth/oauth-provider";
import type { BetterAuthPlugin } from "better-auth";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import { cibaRegistrationHooks } from "./client-metadata.js";
import { cibaDecision } from "./decision.js";
import { CIBA_ERROR_CODES } from "./error-codes.js";
import { cibaGrant } from "./grant.js";
import { ACR_VALUES, CIBA_GRANT, type CibaOptions } from "./options.js";
import { backchannelAuthentication } from "./request.js";
import { cibaSchema } from "./schema.js";
import { strongSignInHook } from "./strong.js";

export { ACR_VALUES, CIBA_GRANT, STRONG_ACR, type CibaOptions } from "./options.js";

/**
 * OpenID Client-Initiated Backchannel Authentication (CIBA Core 1.0), poll and ping modes.
 * `extension` is oauth-provider's: the CIBA grant at /oauth2/token (./grant.ts) and the
 * discovery metadata. `plugin` carries the table, the backchannel authentication endpoint
 * (./request.ts), the person's decision (./decision.ts), the client registration metadata
 * (./client-metadata.ts) and the note of passkey and identity-key sign-ins that strong
 * approval asks for (./strong.ts). Signed authentication requests are not supported, nor is
 * push mode or the user_code parameter.
 */
export function ciba(options: CibaOptions): { extension: OAuthProviderExtension; plugin: BetterAuthPlugin } {
  const registration = cibaRegistrationHooks({ development: options.development });
  return {
    extension: {
      grants: { [CIBA_GRANT]: cibaGrant(options) },
      metadata: ({ ctx }) => ({
        backchannel_authentication_endpoint: `${ctx.context.baseURL}${AUTH_PATHS.backchannelAuthentication}`,
        backchannel_token_delivery_modes_supported: ["poll", "ping"],
        backchannel_user_code_parameter_supported: false,
      }),
    },
    plugin: {
      id: "ciba",
      schema: cibaSchema,
      $ERROR_CODES: CIBA_ERROR_CODES,
      endpoints: { backchannelAuthentication: backchannelAuthentication(options), cibaDecision: cibaDecision(options) },
      hooks: {
        before: [registration.before],
        after: [registration.after, strongSignInHook([options.keySignInPath, "/passkey/verify-authentication"])],
      },
    } satisfies BetterAuthPlugin,
  };
}

/** `acr_values_supported` for discovery (oauth-provider's own list says only "0"). */
export const ACR_VALUES_SUPPORTED: readonly string[] = ACR_VALUES;

import { getOAuthProviderApi } from "@better-auth/oauth-provider";

type EndpointContext = Parameters<typeof getOAuthProviderApi>[0];
type ProviderOptions = Parameters<typeof getOAuthProviderApi>[1];

/** oauth-provider's API (`hashToken` and the rest) for a hook's context; null when that plugin is not installed. */
export function providerApi(ctx: { context: { getPlugin(id: string): unknown } }) {
  const provider = ctx.context.getPlugin("oauth-provider") as { options: ProviderOptions } | null;
  return provider ? getOAuthProviderApi(ctx as unknown as EndpointContext, provider.options) : null;
}

/**
 * The authorize endpoint sends the browser to our pages with a signed copy of the
 * authorization request (`sig`, `ba_param` naming the signed keys). The pages pass the
 * signed part back as `oauth_query` so better-auth can resume the flow; this mirrors
 * `buildSignedOAuthQuery` in @better-auth/oauth-provider's browser client.
 */
export function signedOAuthQuery(search: URLSearchParams): string | undefined {
  if (!search.has("sig")) return undefined;
  const names = new Set(search.getAll("ba_param"));
  if (!names.size) return undefined;
  const signed = new URLSearchParams();
  for (const [key, value] of search) if (key === "sig" || key === "ba_param" || names.has(key)) signed.append(key, value);
  return signed.toString();
}

import { constantTimeEqual, makeSignature } from "better-auth/crypto";

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

/**
 * Whether `query` (from signedOAuthQuery) carries oauth-provider's own signature, unexpired:
 * the check its consent and continue endpoints make (`verifyOAuthQueryParams`, which the
 * package does not export): HMAC-SHA256 with our secret over the other parameters sorted by
 * key then value, exactly one `sig`, compared in constant time, `exp` not passed.
 */
export async function verifySignedOAuthQuery(query: string, secret: string): Promise<boolean> {
  const params = new URLSearchParams(query);
  const sigs = params.getAll("sig");
  const exp = Number(params.get("exp"));
  if (sigs.length !== 1 || !sigs[0] || !Number.isFinite(exp) || exp * 1000 < Date.now()) return false;
  params.delete("sig");
  const canonical = new URLSearchParams([...params.entries()].sort(([ka, va], [kb, vb]) => (ka < kb ? -1 : ka > kb ? 1 : va < vb ? -1 : va > vb ? 1 : 0)));
  return constantTimeEqual(sigs[0], await makeSignature(canonical.toString(), secret));
}

import { createLocalJWKSet, errors, jwtVerify, type JWTPayload } from "jose";

/**
 * A resource server's check of an access token issued for it (RFC 9068 §4): a JWT of type
 * `at+jwt`, signed by one of our keys (the JWKS document, read locally), issued by `issuer`,
 * for `audience` (RFC 8707: the resource the client named), not expired. Anything else (an
 * opaque token, a token for another resource, a tampered or expired one) is null.
 */
export interface ResourceTokenClaims extends JWTPayload {
  sub: string;
  client_id?: string;
  scope?: string;
  /** The BAP identity the grant speaks for (auth.config.ts customAccessTokenClaims, with `profile`). */
  bap_id?: string;
}

export interface ResourceTokenVerifier {
  verify(token: string): Promise<ResourceTokenClaims | null>;
}

export function resourceTokenVerifier(opts: { issuer: string; audience: string; jwks: () => string | Promise<string> }): ResourceTokenVerifier {
  let keys: { text: string; set: ReturnType<typeof createLocalJWKSet> } | undefined;
  const keySet = async () => {
    const text = await opts.jwks();
    if (keys?.text !== text) keys = { text, set: createLocalJWKSet(JSON.parse(text)) };
    return keys.set;
  };
  return {
    async verify(token) {
      if (token.split(".").length !== 3) return null;
      try {
        const { payload } = await jwtVerify(token, await keySet(), { issuer: opts.issuer, audience: opts.audience, typ: "at+jwt", requiredClaims: ["sub", "exp"] });
        return payload as ResourceTokenClaims;
      } catch (err) {
        if (err instanceof errors.JOSEError) return null;
        throw err;
      }
    },
  };
}

import type { AuthContext, BetterAuthPlugin } from "better-auth";
import { APIError, createAuthEndpoint } from "better-auth/api";
import { setSessionCookie } from "better-auth/cookies";
import type { Kysely } from "kysely";
import { verifyBitcoinAuthToken, type BitcoinAuthPolicy } from "../../lib/bitcoin-auth.js";
import { addressOf, bapIdOfMemberKey, isBapId, isKeyAccountEmail, keyAccountEmail } from "../../lib/bap.js";
import { isSuspended } from "../bap-identity/store.js";
import { findIdentity, listIdentitiesOfMemberKey, registerIdentity, type BapIdentity } from "../bap-identity/store.js";
import { KEY_SIGN_IN_ERROR_CODES as CODES } from "./error-codes.js";
import type { Database } from "../../lib/db/tables.js";

export interface KeySignInOptions {
  /** The Kysely instance better-auth uses: identities are read and written through plugins/bap-identity/store.ts. */
  db: Kysely<Database>;
  bitcoinAuth: BitcoinAuthPolicy;
  /**
   * The route segment: POST /sign-in/<serviceName> and /sign-up/<serviceName> (setting
   * SIGMA_SERVICE_NAME). The published client @sigma-auth/better-auth-plugin calls "sigma".
   * @default "sigma"
   */
  serviceName?: string;
  /** Where better-auth is mounted, as clients sign paths. @default "/api/auth" */
  basePath?: string;
  /** Largest body read, in bytes. @default 4096 */
  maxBodyBytes?: number;
}

/** Reads the raw body (the endpoint clones the request, so the original is still unread). */
async function rawBody(request: Request | undefined, max: number): Promise<string> {
  if (!request) throw APIError.from("BAD_REQUEST", CODES.REQUEST_REQUIRED);
  const text = await request.text();
  if (text.length > max) throw APIError.from("BAD_REQUEST", CODES.INVALID_BODY);
  return text;
}

/**
 * `{"bapId":"..."}` exactly as compact JSON (the bytes the token signs), or `{}` signed as no
 * body. Anything else is refused: no extra keys, no whitespace variants.
 */
function parseSignInBody(raw: string): { bapId: string | null; signedBody: string | undefined } {
  const trimmed = raw.trim();
  if (trimmed === "" || trimmed === "{}") return { bapId: null, signedBody: undefined };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw APIError.from("BAD_REQUEST", CODES.INVALID_BODY);
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw APIError.from("BAD_REQUEST", CODES.INVALID_BODY);
  const keys = Object.keys(parsed);
  const bapId = (parsed as { bapId?: unknown }).bapId;
  if (keys.length !== 1 || !isBapId(bapId) || raw !== JSON.stringify({ bapId })) throw APIError.from("BAD_REQUEST", CODES.INVALID_BODY);
  return { bapId, signedBody: raw };
}

/**
 * Key sign-in with BAP identities. The server verifies signatures only; it never sees a
 * private key. POST /sign-in/<service> creates a normal better-auth session for the owner of
 * a registered profile whose member key signed the request; POST /sign-up/<service> enrols
 * a new identity (user + registration record) and signs in.
 */
export function keySignIn(options: KeySignInOptions) {
  const service = options.serviceName ?? "sigma";
  const basePath = options.basePath ?? "/api/auth";
  const maxBody = options.maxBodyBytes ?? 4096;
  const signInPath = `/sign-in/${service}`;
  const signUpPath = `/sign-up/${service}`;

  async function verify(token: string | null, requestPath: string, body: string | undefined) {
    const result = await verifyBitcoinAuthToken(token, { requestPath, body }, options.bitcoinAuth);
    if (!result.ok) throw APIError.from("UNAUTHORIZED", CODES.INVALID_AUTH_TOKEN);
    return result.pubkey;
  }

  /**
   * The key-account domain is ours alone: only this plugin's sign-up creates an address in it.
   * A person's sign-up, change of address, social sign-in or an admin's edit that names one is
   * refused with 400, so nobody can take a key's address before its holder enrols.
   */
  function refuseReservedEmail(data: { email?: unknown }, ctx: { path?: string } | null | undefined, creating: boolean) {
    if (!isKeyAccountEmail(data.email)) return;
    if (creating && ctx?.path === signUpPath) return;
    throw APIError.from("BAD_REQUEST", CODES.RESERVED_EMAIL_DOMAIN);
  }

  /**
   * The registration record of `bapId`. Its account's row is read meanwhile, for the request's
   * memo (plugins/core-store/request-reads.ts): the handler's own read below then shares it. A
   * failed read is not kept, so the handler meets it by reading again.
   */
  async function namedProfile(adapter: Pick<AuthContext["internalAdapter"], "findUserById">, bapId: string) {
    const profile = await findIdentity(options.db, bapId);
    if (profile) adapter.findUserById(profile.userId).catch(() => {});
    return profile;
  }

  return {
    id: "key-sign-in",
    $ERROR_CODES: CODES,
    init() {
      return {
        options: {
          databaseHooks: {
            user: {
              create: { before: async (user, ctx) => refuseReservedEmail(user, ctx, true) },
              update: { before: async (user, ctx) => refuseReservedEmail(user, ctx, false) },
            },
          },
        },
      };
    },
    endpoints: {
      signInWithKey: createAuthEndpoint(
        signInPath,
        { method: "POST", cloneRequest: true, requireHeaders: true, metadata: { allowedMediaTypes: ["application/json", ""] } },
        async (ctx) => {
          const raw = await rawBody(ctx.request, maxBody);
          const { bapId, signedBody } = parseSignInBody(raw);
          // The named profile (and its account, namedProfile) is read while the token's replay
          // record is written: reads only, and nothing read is used unless the signature holds.
          const named = bapId ? namedProfile(ctx.context.internalAdapter, bapId) : null;
          named?.catch(() => {}); // met below, once the signature holds
          const signer = await verify(ctx.headers?.get("x-auth-token") ?? null, basePath + signInPath, signedBody);

          let profile: BapIdentity | null;
          if (named) {
            profile = await named;
          } else {
            // No bapId: the caller's primary profile in force (the list is primary first), found by the key that signed.
            const mine = await listIdentitiesOfMemberKey(options.db, signer);
            profile = mine.find((p) => !isSuspended(p)) ?? mine[0] ?? null;
          }
          // The profile must exist and its member key must be the signer (registered key, or
          // for records without one, the key whose address derives the bapId).
          const memberKey = profile?.memberPubkey ?? null;
          const owns = profile && (memberKey ? memberKey === signer : bapIdOfMemberKey(signer) === profile.bapId);
          if (!profile || !owns) throw APIError.from("FORBIDDEN", CODES.RESTORE_PROFILE_NOT_FOUND);
          // Told only to the key's holder (ownership is proven above): the account's owner proved
          // the mailbox after this identity was attached, and has not confirmed it since.
          if (isSuspended(profile)) throw APIError.from("FORBIDDEN", CODES.IDENTITY_SUSPENDED);

          const user = await ctx.context.internalAdapter.findUserById(profile.userId);
          if (!user) throw APIError.from("FORBIDDEN", CODES.RESTORE_PROFILE_NOT_FOUND);
          if ((user as { banned?: boolean }).banned) throw APIError.from("FORBIDDEN", CODES.BANNED_USER);
          const session = await ctx.context.internalAdapter.createSession(user.id, false, { selectedBapId: profile.bapId });
          await setSessionCookie(ctx, { session, user });
          return ctx.json({ token: session.token, user: { id: user.id, pubkey: (user as { pubkey?: string | null }).pubkey ?? signer, name: user.name } });
        },
      ),
      signUpWithKey: createAuthEndpoint(
        signUpPath,
        { method: "POST", cloneRequest: true, requireHeaders: true },
        async (ctx) => {
          const raw = await rawBody(ctx.request, maxBody);
          let body: { bapId?: unknown; intent?: unknown };
          try {
            body = JSON.parse(raw);
          } catch {
            throw APIError.from("BAD_REQUEST", CODES.INVALID_BODY);
          }
          if (!body || typeof body !== "object" || !isBapId(body.bapId) || body.intent !== "sign-up" || Object.keys(body).length !== 2) {
            throw APIError.from("BAD_REQUEST", CODES.INVALID_BODY);
          }
          const bapId = body.bapId;
          const path = basePath + signUpPath;
          const signer = await verify(ctx.headers?.get("x-auth-token") ?? null, path, raw);
          const proof = await verifyBitcoinAuthToken(ctx.headers?.get("x-sigma-enrollment-proof") ?? null, { requestPath: path, body: raw, use: "x-sigma-enrollment-proof" }, options.bitcoinAuth);
          // Both from the identity's member key: its address is the root address the bapId derives from.
          if (!proof.ok || proof.pubkey !== signer || bapIdOfMemberKey(signer) !== bapId) throw APIError.from("UNAUTHORIZED", CODES.INVALID_ENROLLMENT_PROOF);

          if (await findIdentity(options.db, bapId)) throw APIError.from("CONFLICT", CODES.IDENTITY_ALREADY_REGISTERED);
          // The reserved key-account address (lib/bap.ts); emailVerified stays false.
          const email = keyAccountEmail(bapId);
          const user = await ctx.context.internalAdapter.createUser({ name: bapId, email, emailVerified: false, pubkey: signer }, ctx);
          try {
            // The account's first identity, so its primary one.
            if ((await registerIdentity(options.db, user.id, { bapId, memberPubkey: signer, rootAddress: addressOf(signer) })) !== "created") throw new Error("taken");
          } catch {
            // Lost a race for the same bapId (unique): leave no half-made account behind.
            await ctx.context.internalAdapter.deleteUser(user.id);
            throw APIError.from("CONFLICT", CODES.IDENTITY_ALREADY_REGISTERED);
          }
          const session = await ctx.context.internalAdapter.createSession(user.id, false, { selectedBapId: bapId });
          await setSessionCookie(ctx, { session, user });
          return ctx.json({ token: session.token, user: { id: user.id, pubkey: signer, name: user.name } });
        },
      ),
    },
  } satisfies BetterAuthPlugin;
}

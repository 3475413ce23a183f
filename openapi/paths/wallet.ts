import { OwnershipQuery } from "../../plugins/wallet/ownership.js";
import { ByBapId, Connect, SetPayment, SetPrimary } from "../../routes/wallet/wallet.js";
import { ref, record } from "../schemas.js";
import { BAD_INPUT, jsonBody, jsonResponse, problemResponses, SESSION, UNAUTHORIZED, type Operation, type Paths } from "../components.js";

/**
 * routes/wallet/wallet.ts: wallets connected to the signed-in user's identities. One router, two mounts:
 * /api/wallet and, for the published Sigma client, /api/auth/wallet.
 */
const errors = problemResponses({
  ...BAD_INPUT,
  ...UNAUTHORIZED,
  403: "The signature is not by the wallet's key, or from another site.",
  404: "No such identity or wallet of yours.",
  409: "The wallet is connected to another account.",
  502: "The ordinals indexer did not answer.",
});
const str = { type: "string" };
const strOrNull = { type: ["string", "null"] };
const CONNECTED = record("The connected wallet.", { success: { type: "boolean", const: true }, walletAddress: str, pubkey: strOrNull, provider: str, connectionMethod: str, connectedAt: { type: "string", format: "date-time" }, bapId: str, isPrimary: { type: "boolean" } });
const NFTS = { type: "array", items: ref("Nft") };
const ADDRESSES = { type: "array", items: str };
const bapIdQuery = { name: "bapId", in: "query", required: true, schema: { type: "string" } };
const op = (summary: string, answer: Record<string, unknown>, extra: Operation = {}): Operation => ({ tags: ["Wallets"], summary, security: SESSION, responses: { 200: jsonResponse(String(answer.description ?? "OK."), answer), ...errors }, ...extra });

function walletPaths(prefix: string, operationPrefix: string): Paths {
  const id = (name: string) => ({ operationId: operationPrefix + name });
  const success = (members: Record<string, unknown>) => record("Done.", { success: { type: "boolean", const: true }, ...members });
  return {
    [`${prefix}/connect`]: {
      post: op(
        "Connect a wallet (a Bitcoin-Auth authToken by the wallet's key over /api/wallet/connect and the body {\"bapId\":\"<bapId>\"}, or an EVM signature over the challenge)",
        CONNECTED,
        { ...id("Connect"), requestBody: jsonBody(Connect) },
      ),
      get: op("The wallets connected to an identity (the primary one without bapId)", record("The connections.", { wallets: { type: "array", items: ref("WalletConnection") } }), {
        ...id("List"),
        parameters: [{ ...bapIdQuery, required: false }],
      }),
      delete: op("Disconnect a wallet", success({ walletAddress: str, bapId: str }), {
        ...id("Disconnect"),
        parameters: [bapIdQuery, { name: "address", in: "query", required: true, schema: { type: "string" } }],
      }),
    },
    [`${prefix}/connect/challenge`]: {
      post: op("A message for an EVM wallet to sign", record("The challenge (valid until expiresAt).", { nonce: str, message: str, issuedAt: { type: "string", format: "date-time" }, expiresAt: { type: "string", format: "date-time" } }), {
        ...id("Challenge"),
        requestBody: jsonBody(ByBapId),
      }),
    },
    [`${prefix}/address`]: {
      get: op("The identity's primary and payment addresses", record("The addresses.", { bapId: str, primaryAddress: strOrNull, paymentAddress: strOrNull, paymentProvider: strOrNull, wallets: { type: "array", items: ref("WalletConnection") } }), {
        ...id("Address"),
        parameters: [bapIdQuery],
      }),
    },
    [`${prefix}/set-primary`]: { post: op("Make a connected wallet the primary one", success({ bapId: str, primaryAddress: str }), { ...id("SetPrimary"), requestBody: jsonBody(SetPrimary) }) },
    [`${prefix}/set-payment`]: {
      post: op("Make a connected wallet the payment one", success({ bapId: str, walletAddress: str, paymentAddress: str, paymentProvider: str }), { ...id("SetPayment"), requestBody: jsonBody(SetPayment) }),
    },
    [`${prefix}/nfts`]: {
      get: op(
        "NFTs held by the identity's connected wallets",
        record("Each wallet's NFTs (the first 100 indexer entries per address); `incomplete` when a wallet could not be read.", {
          wallets: { type: "array", items: record("One wallet's NFTs.", { address: str, nfts: NFTS, count: { type: "integer" }, error: str }, ["error"]) },
          nfts: NFTS,
          totalNFTs: { type: "integer" },
          addresses: ADDRESSES,
          incomplete: { type: "boolean" },
          failedWallets: ADDRESSES,
          limitPerAddress: { type: "integer" },
          fetchedAt: { type: "string", format: "date-time" },
        }),
        { ...id("Nfts"), parameters: [{ name: "refresh", in: "query", required: false, schema: { type: "string", enum: ["true", "false"] } }] },
      ),
    },
    [`${prefix}/verify-ownership`]: {
      post: op(
        "Whether a connected wallet holds an asset",
        record(
          "The answer; with `incomplete`, `owns: false` means not found so far.",
          { owns: { type: "boolean" }, count: { type: "integer" }, minCount: { type: "integer" }, nfts: NFTS, bapId: strOrNull, addresses: ADDRESSES, incomplete: { type: "boolean" }, failedWallets: ADDRESSES, message: str },
          ["message"],
        ),
        { ...id("VerifyOwnership"), requestBody: jsonBody(OwnershipQuery) },
      ),
    },
  };
}

export const walletApiPaths: Paths = { ...walletPaths("/api/wallet", "wallet"), ...walletPaths("/api/auth/wallet", "sigmaWallet") };

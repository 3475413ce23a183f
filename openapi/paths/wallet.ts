import { BAD_INPUT, jsonResponse, problemResponses, SESSION, UNAUTHORIZED, type Operation, type Paths } from "../components.js";

/**
 * routes/wallet/wallet.ts: wallets connected to the signed-in user's identities. One router, two mounts:
 * /api/wallet and, for the published Sigma client, /api/auth/wallet.
 */
const errors = problemResponses({ ...BAD_INPUT, ...UNAUTHORIZED, 404: "No such identity or wallet of yours." });
const bapIdQuery = { name: "bapId", in: "query", required: true, schema: { type: "string" } };
const body = (description: string) => ({ required: true, content: { "application/json": { schema: { type: "object", description } } } });
const op = (summary: string, extra: Operation = {}): Operation => ({ tags: ["Wallets"], summary, security: SESSION, responses: { 200: jsonResponse("OK."), ...errors }, ...extra });

function walletPaths(prefix: string, operationPrefix: string): Paths {
  const id = (name: string) => ({ operationId: operationPrefix + name });
  return {
    [`${prefix}/connect`]: {
      post: op("Connect a wallet (a Bitcoin-Auth authToken by the wallet's key over /api/wallet/connect and the body {\"bapId\":\"<bapId>\"}, or an EVM signature over the challenge)", {
        ...id("Connect"),
        requestBody: body("{bapId, authToken} or {bapId, connectionMethod: 'evm', address, message, signature}"),
      }),
      get: op("The wallets connected to an identity (the primary one without bapId)", { ...id("List"), parameters: [{ ...bapIdQuery, required: false }] }),
      delete: op("Disconnect a wallet", { ...id("Disconnect"), parameters: [bapIdQuery, { name: "address", in: "query", required: true, schema: { type: "string" } }] }),
    },
    [`${prefix}/connect/challenge`]: { post: op("A message for an EVM wallet to sign", { ...id("Challenge"), requestBody: body("{bapId}") }) },
    [`${prefix}/address`]: { get: op("The identity's primary and payment addresses", { ...id("Address"), parameters: [bapIdQuery] }) },
    [`${prefix}/set-primary`]: { post: op("Make a connected wallet the primary one", { ...id("SetPrimary"), requestBody: body("{bapId, walletAddress}") }) },
    [`${prefix}/set-payment`]: { post: op("Make a connected wallet the payment one", { ...id("SetPayment"), requestBody: body("{bapId, walletAddress, depositAddress?}") }) },
    [`${prefix}/nfts`]: {
      get: op("NFTs held by the identity's connected wallets", {
        ...id("Nfts"),
        parameters: [{ name: "refresh", in: "query", required: false, schema: { type: "string", enum: ["true", "false"] } }],
      }),
    },
    [`${prefix}/verify-ownership`]: { post: op("Whether a connected wallet holds an asset", { ...id("VerifyOwnership"), requestBody: body("What to check (see the wallet API)") }) },
  };
}

export const walletApiPaths: Paths = { ...walletPaths("/api/wallet", "wallet"), ...walletPaths("/api/auth/wallet", "sigmaWallet") };

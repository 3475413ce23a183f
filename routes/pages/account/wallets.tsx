import { Hono } from "hono";
import type { NftListing } from "../../../plugins/wallet/ownership.js";
import { canReceivePayments, makePaymentWallet, makePrimaryWallet, removeConnection, type WalletConnection } from "../../../plugins/wallet/store.js";
import { CONNECT_TOKEN_PATH } from "../../../lib/mount-paths.js";
import { readForm } from "../form-replay.js";
import type { PageContext, PageEnv } from "../page-env.js";
import { AccountTable, PostButton } from "./account-table.js";
import { Section, When } from "./format.js";
import { accountForm, backWith, backWithError, backWithNotice, outcomeHref } from "./outcome.js";
import type { BapIdentityRow } from "../../../plugins/accounts/store.js";

/**
 * Connected wallets (routes/wallet/wallet.ts: the same store functions) and the NFTs they hold. A
 * wallet app connects itself, with a token only it can sign; an Ethereum browser wallet is
 * connected from this page (client/wallet-connect.ts signs the server's challenge with the
 * wallet and posts it to the API). The page manages connections and shows what the NFT
 * indexer found.
 */

/** What the page needs to offer "Connect an Ethereum wallet". */
export interface WalletConnectControls {
  /** The bundled script, or null when it could not be built. */
  scriptSrc: string | null;
}

/** The NFTs as far as the indexer answered before the page's deadline ("late": not at all yet). */
export type NftsView = NftListing | "late";

export function WalletsSection(props: { wallets: WalletConnection[]; identities: BapIdentityRow[] } & WalletConnectControls) {
  const nameOf = (bapId: string) => props.identities.find((i) => i.bapId === bapId)?.name ?? null;
  return (
    <Section id="wallets" title="Wallets">
      <p class="muted">
        A wallet app (Yours, 1Sat and others) connects itself to one of your BAP identities: it signs a token with the wallet's key and sends it to{" "}
        <code>POST {CONNECT_TOKEN_PATH}</code> while you are signed in. The primary wallet receives your NFTs; the payment wallet (Yours or 1Sat only) receives payments. Disconnecting
        only removes the link here; the wallet and what it holds stay as they are.
      </p>
      {props.wallets.length ? (
        <AccountTable columns={["Wallet", "Connected"]} actions="Status and actions">
          {props.wallets.map((w) => {
            const fields = { bap_id: w.bapId, address: w.address };
            const label = `${w.provider} wallet ${w.address}`;
            const identity = nameOf(w.bapId);
            return (
              <tr data-wallet={w.address}>
                <td>
                  <code>{w.address}</code> <span class="muted">({w.provider})</span>
                  <br />
                  <span class="muted">
                    for {identity ? <strong>{identity} </strong> : "identity "}
                    <code>{w.bapId}</code>
                  </span>
                </td>
                <td>
                  <When at={w.connectedAt} />
                </td>
                <td>
                  {w.isPrimary ? (
                    <strong>Primary</strong>
                  ) : (
                    <PostButton action="/account/wallets/primary" fields={fields} text="Make primary" label={`Make primary: ${label}`} />
                  )}{" "}
                  {w.isPayment ? (
                    <strong>Payments</strong>
                  ) : canReceivePayments(w) ? (
                    <PostButton action="/account/wallets/payment" fields={fields} text="Use for payments" label={`Use for payments: ${label}`} />
                  ) : null}{" "}
                  <PostButton action="/account/wallets/disconnect" fields={fields} text="Disconnect" label={`Disconnect: ${label}`} />
                </td>
              </tr>
            );
          })}
        </AccountTable>
      ) : (
        <p class="muted">No wallet is connected.</p>
      )}
      <ConnectWallet identities={props.identities.filter((i) => !i.suspended)} scriptSrc={props.scriptSrc} />
    </Section>
  );
}

/** "Connect an Ethereum wallet": hidden until client/wallet-connect.ts wires it up. */
function ConnectWallet(props: { identities: BapIdentityRow[]; scriptSrc: string | null }) {
  if (!props.identities.length) return <p class="muted">Add a BAP identity (above), or confirm a suspended one, to connect wallets to it.</p>;
  return (
    <>
      <form id="wallet-connect" hidden data-challenge-path={`${CONNECT_TOKEN_PATH}/challenge`} data-connect-path={CONNECT_TOKEN_PATH} data-done={outcomeHref("wallets", "notice=wallet-connected")}>
        <label for="wallet-connect-identity">Identity to connect a wallet to</label>
        <select id="wallet-connect-identity" name="bapId">
          {props.identities.map((i) => (
            <option value={i.bapId} selected={i.isPrimary}>
              {i.name ? `${i.name} (${i.bapId})` : i.bapId}
            </option>
          ))}
        </select>
        <button type="submit">Connect an Ethereum wallet</button>
        <p data-role="error" class="error" role="alert" hidden></p>
        <p data-role="status" class="muted" role="status"></p>
      </form>
      <p class="muted" data-wallet-connect-fallback>
        Connecting a browser wallet (MetaMask and other Ethereum wallets) from this page needs JavaScript.
      </p>
      {props.scriptSrc ? <script type="module" src={props.scriptSrc}></script> : null}
    </>
  );
}

/** The NFTs in the connected Bitcoin wallets, saying so when some wallet could not be read. */
export function NftsSection(props: { nfts: NftsView | null }) {
  const { nfts } = props;
  return (
    <Section id="nfts" title="Your NFTs">
      {nfts === null ? (
        <p class="muted">Connect a wallet to see the NFTs it holds.</p>
      ) : nfts === "late" ? (
        <p class="error" role="alert">
          The NFT indexer is slow to answer, so your NFTs are not shown yet. Reload the page in a moment.
        </p>
      ) : (
        <>
          {nfts.incomplete ? (
            <p class="error" role="alert">
              The NFT indexer could not be reached for {nfts.failedWallets.length === 1 ? "one wallet" : `${nfts.failedWallets.length} wallets`} ({nfts.failedWallets.join(", ")}), so this
              list may be missing some NFTs. Reload the page later to try again.
            </p>
          ) : null}
          {nfts.wallets.some((w) => w.count) ? (
            <AccountTable columns={["NFT", "Wallet"]}>
              {nfts.wallets.flatMap((w) =>
                w.nfts.map((n) => (
                  <tr data-nft={n.origin?.outpoint ?? n.outpoint}>
                    <td>
                      <code>{n.origin?.outpoint ?? n.outpoint}</code>
                    </td>
                    <td>
                      <code>{w.address}</code>
                    </td>
                  </tr>
                )),
              )}
            </AccountTable>
          ) : nfts.incomplete ? null : (
            <p class="muted">Your connected wallets hold no NFTs.</p>
          )}
          {nfts.wallets.some((w) => w.count >= nfts.limitPerAddress) ? <p class="muted">Only the first {nfts.limitPerAddress} entries of each wallet are shown.</p> : null}
        </>
      )}
    </Section>
  );
}

/** The wallet the form names: its identity and address. */
async function walletOf(c: PageContext) {
  const form = await readForm(c);
  return { bapId: form.bap_id ?? "", address: form.address ?? "" };
}

const NOT_CONNECTED = "WALLET_NOT_CONNECTED";

/** The store changes only the signed-in person's rows: anyone else's wallet reads as not connected. */
async function makeWalletPrimary(c: PageContext) {
  const { bapId, address } = await walletOf(c);
  return backWith(Boolean(await makePrimaryWallet(c.var.page.db, c.var.session.user.id, bapId, address)), "wallet-primary-set", "wallets", NOT_CONNECTED);
}

async function makeWalletPayment(c: PageContext) {
  const { bapId, address } = await walletOf(c);
  const row = await makePaymentWallet(c.var.page.db, c.var.session.user.id, bapId, address);
  if (!row) return backWithError(null, "wallets", NOT_CONNECTED);
  if ("unsupported" in row) return backWithError(null, "wallets", "PAYMENT_PROVIDER_NOT_SUPPORTED");
  return backWithNotice(null, "wallet-payment-set", "wallets");
}

async function disconnectWallet(c: PageContext) {
  const { bapId, address } = await walletOf(c);
  return backWith(await removeConnection(c.var.page.db, c.var.session.user.id, bapId, address), "wallet-disconnected", "wallets", NOT_CONNECTED);
}

/** Mounted at /account. */
export const walletRoutes = new Hono<PageEnv>()
  .post("/wallets/primary", ...accountForm, makeWalletPrimary)
  .post("/wallets/payment", ...accountForm, makeWalletPayment)
  .post("/wallets/disconnect", ...accountForm, disconnectWallet);

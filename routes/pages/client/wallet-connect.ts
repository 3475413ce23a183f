import { postJson } from "./post-json.js";

/**
 * "Connect an Ethereum wallet" on the account page: the browser wallet (an EIP-1193 provider
 * at window.ethereum, as MetaMask and most extensions inject it) shares an account
 * (eth_requestAccounts), signs the server's challenge for the chosen identity (personal_sign,
 * EIP-191), and the page posts the signature to POST /api/wallet/connect (connectionMethod
 * evm; routes/wallet/wallet.ts checks it). No key ever reaches this page: the wallet signs.
 * The form stays hidden until this script wires it up, so without JavaScript the page says
 * what connecting needs instead.
 */

interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
  isMetaMask?: boolean;
  isCoinbaseWallet?: boolean;
}

class ShownError extends Error {}

const form = document.getElementById("wallet-connect");
if (form instanceof HTMLFormElement) wire(form);

function wire(form: HTMLFormElement) {
  const error = form.querySelector<HTMLElement>("[data-role=error]");
  const status = form.querySelector<HTMLElement>("[data-role=status]");
  const button = form.querySelector<HTMLButtonElement>("button[type=submit]");
  const identity = form.querySelector<HTMLSelectElement>("select[name=bapId]");
  if (!error || !status || !button || !identity) return;
  const show = (message: string | null, note = "") => {
    error.textContent = message ?? "";
    error.hidden = !message;
    status.textContent = note;
  };
  form.hidden = false;
  document.querySelectorAll<HTMLElement>("[data-wallet-connect-fallback]").forEach((el) => (el.hidden = true));
  const data = form.dataset;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void (async () => {
      button.disabled = true;
      show(null, "Waiting for your wallet…");
      try {
        await connect(identity.value, data.challengePath ?? "/api/wallet/connect/challenge", data.connectPath ?? "/api/wallet/connect", show);
        show(null, "Connected.");
        location.assign(data.done ?? "/account#wallets");
      } catch (err) {
        show(words(err));
      } finally {
        button.disabled = false;
      }
    })();
  });
}

/** The injected provider, looked up when asked (extensions may inject after the page loads). */
function injectedProvider(): Eip1193Provider | null {
  const candidate = (window as unknown as { ethereum?: Partial<Eip1193Provider> }).ethereum;
  return candidate && typeof candidate.request === "function" ? (candidate as Eip1193Provider) : null;
}

/** The wallet's name as the connection records it. */
function providerName(p: Eip1193Provider): string {
  if (p.isMetaMask) return "metamask";
  if (p.isCoinbaseWallet) return "coinbase";
  return "ethereum";
}

async function connect(bapId: string, challengePath: string, connectPath: string, show: (message: string | null, note?: string) => void) {
  const wallet = injectedProvider();
  if (!wallet) {
    throw new ShownError("No Ethereum wallet was found in this browser. Install or unlock a wallet extension (such as MetaMask), then reload this page and try again.");
  }
  const accounts = await wallet.request({ method: "eth_requestAccounts" });
  const address = Array.isArray(accounts) && typeof accounts[0] === "string" ? accounts[0] : null;
  if (!address) throw new ShownError("Your wallet shared no account. Unlock it, choose an account and try again.");
  const challenge = (await answer(await postJson(challengePath, { bapId }))) as { message?: unknown };
  if (typeof challenge.message !== "string") throw new ShownError("The server did not answer with a challenge. Try again.");
  show(null, "Sign the message in your wallet…");
  const signature = await wallet.request({ method: "personal_sign", params: [utf8Hex(challenge.message), address] });
  if (typeof signature !== "string") throw new ShownError("Your wallet returned no signature. Try again.");
  show(null, "Connecting…");
  await answer(await postJson(connectPath, { bapId, provider: providerName(wallet), connectionMethod: "evm", address, message: challenge.message, signature }));
}

function utf8Hex(text: string): string {
  return `0x${Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** The JSON of a good answer; a refusal in the server's own words (RFC 9457 detail). */
async function answer(res: Response): Promise<unknown> {
  const body = (await res.json().catch(() => null)) as { detail?: unknown } | null;
  if (!res.ok || !body) throw new ShownError(typeof body?.detail === "string" ? body.detail : "The server could not connect the wallet. Try again.");
  return body;
}

function words(err: unknown): string {
  if (err instanceof ShownError) return err.message;
  // EIP-1193 provider errors carry a numeric code: 4001 the person declined, -32002 a request is already open.
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 4001) return "You declined the request in your wallet. Nothing was connected.";
  if (code === -32002) return "Your wallet already has a request open. Finish or close it in the wallet, then try again.";
  return "Something went wrong while talking to your wallet. Try again.";
}

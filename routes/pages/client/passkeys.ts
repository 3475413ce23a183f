import { browserSupportsWebAuthn, startAuthentication, startRegistration, WebAuthnError } from "@simplewebauthn/browser";
import { continueAuthorization } from "./continue-flow.js";
import { postJson } from "./post-json.js";

/**
 * Passkeys in the browser (WebAuthn): "Sign in with a passkey" on /sign-in and "Add a passkey"
 * on the account page. Both are better-auth's passkey endpoints: fetch options, let the
 * authenticator sign the challenge, post the answer. The private key never leaves the
 * authenticator; the server checks the signature against our origin and RP ID.
 * Each control stays hidden until this script has wired it up, so without JavaScript (or
 * without WebAuthn) the page shows only what works.
 */

const signIn = document.getElementById("passkey-sign-in");
if (signIn instanceof HTMLFormElement) wireSignIn(signIn);
const add = document.getElementById("passkey-add");
if (add instanceof HTMLFormElement) wireRegistration(add);

class ShownError extends Error {}

function parts(form: HTMLFormElement) {
  const error = form.querySelector<HTMLElement>("[data-role=error]");
  const status = form.querySelector<HTMLElement>("[data-role=status]");
  const button = form.querySelector<HTMLButtonElement>("button[type=submit]");
  if (!error || !status || !button) throw new Error("passkey form is incomplete");
  const show = (message: string | null, note = "") => {
    error.textContent = message ?? "";
    error.hidden = !message;
    status.textContent = note;
  };
  return { button, show };
}

function reveal(form: HTMLFormElement): boolean {
  if (!browserSupportsWebAuthn()) return false;
  form.hidden = false;
  document.querySelectorAll<HTMLElement>("[data-passkey-fallback]").forEach((el) => (el.hidden = true));
  return true;
}

/** Runs `task` when the form is sent, its button disabled meanwhile; a failure is shown in words. */
function onSubmit(form: HTMLFormElement, prompt: string, task: (show: (message: string | null, note?: string) => void) => Promise<void>) {
  const { button, show } = parts(form);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void (async () => {
      button.disabled = true;
      show(null, prompt);
      try {
        await task(show);
      } catch (err) {
        show(words(err));
      } finally {
        button.disabled = false;
      }
    })();
  });
}

function wireSignIn(form: HTMLFormElement) {
  if (!reveal(form)) return;
  const data = form.dataset;
  onSubmit(form, "Waiting for your passkey…", async (show) => {
    const options = await getJson(data.optionsPath ?? "/api/auth/passkey/generate-authenticate-options");
    const response = await startAuthentication({ optionsJSON: options as never });
    show(null, "Signing in…");
    const res = await postJson(data.verifyPath ?? "/api/auth/passkey/verify-authentication", { response });
    if (!res.ok) throw new ShownError(res.status === 429 ? "Too many attempts. Wait a minute and try again." : "That passkey was not accepted. Try another way to sign in.");
    let next = data.done ?? "/";
    if (data.oauthQuery) {
      try {
        next = await continueAuthorization(data.oauthQuery, {
          continuePath: data.continuePath ?? "/api/auth/oauth2/continue",
          authorizePath: data.authorizePath ?? "/api/auth/oauth2/authorize",
          signInPath: location.pathname,
        });
      } catch {
        throw new ShownError("You are signed in, but the application's request has expired. Go back to the application and start again.");
      }
    }
    show(null, "Signed in.");
    location.assign(next);
  });
}

function wireRegistration(form: HTMLFormElement) {
  if (!reveal(form)) return;
  const data = form.dataset;
  const nameInput = form.querySelector<HTMLInputElement>("input[name=name]");
  onSubmit(form, "Follow your browser's prompt to create the passkey…", async () => {
    const name = nameInput?.value.trim() ?? "";
    const optionsUrl = new URL(data.optionsPath ?? "/api/auth/passkey/generate-register-options", location.href);
    const options = await getJson(optionsUrl.pathname + optionsUrl.search);
    const response = await startRegistration({ optionsJSON: options as never });
    const res = await postJson(data.verifyPath ?? "/api/auth/passkey/verify-registration", { response, ...(name ? { name } : {}) });
    if (!res.ok) throw new ShownError("The passkey could not be saved. Try again.");
    location.assign(data.done ?? "/account");
  });
}

async function getJson(path: string): Promise<unknown> {
  const res = await fetch(path, { credentials: "same-origin", cache: "no-store", headers: { accept: "application/json" } });
  const body = (await res.json().catch(() => null)) as { code?: unknown } | null;
  if (res.status === 403 && body?.code === "SESSION_NOT_FRESH") throw new ShownError("For your security, sign out and sign in again before adding a passkey.");
  if (res.status === 401) throw new ShownError("Your session has ended. Sign in again.");
  if (!res.ok || !body) throw new ShownError("The server could not start the passkey request. Try again.");
  return body;
}

function words(err: unknown): string {
  if (err instanceof ShownError) return err.message;
  if (err instanceof WebAuthnError) {
    if (err.code === "ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED") return "This authenticator already holds a passkey for your account.";
    if (err.code === "ERROR_CEREMONY_ABORTED") return "The passkey request was cancelled.";
  }
  if (err instanceof Error && err.name === "NotAllowedError") return "The passkey request was cancelled or timed out.";
  return "Something went wrong with the passkey. Try again.";
}

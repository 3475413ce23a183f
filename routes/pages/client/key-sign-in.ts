import { getAuthToken } from "bitcoin-auth";
import { BackupError, identitiesIn, openBackup, type BackupProblem, type IdentityKey } from "./backup-keys.js";
import { continueAuthorization } from "./continue-flow.js";

/**
 * "Sign in with your identity" on /sign-in (spec, Authentication rule 2). The person's
 * encrypted backup is decrypted here with their password, the member key signs a
 * Bitcoin-Auth token over `{"bapId":"..."}` for the sign-in path, and only the token and
 * that body are posted. The password, the decrypted backup and every key stay in this page.
 * The form stays hidden until this script has wired it up, and its secret fields have no `name`,
 * so nothing in it can ever be submitted as a plain form.
 */

/** Far larger than any identity backup; a bigger file is not one. */
const MAX_BACKUP_CHARS = 1024 * 1024;

const PROBLEM_WORDS: Record<BackupProblem, string> = {
  undecryptable: "That password does not open this backup, or the file is not an encrypted backup.",
  unsupported: "This backup holds no BAP identity that can sign in.",
  mismatch: "This backup's key does not match the identity it names, so it cannot be used.",
  "not-member-key": "This backup holds a signing key, not the identity's member key. Use your master backup.",
};

interface Elements {
  form: HTMLFormElement;
  file: HTMLInputElement;
  password: HTMLInputElement;
  choice: HTMLSelectElement;
  choiceField: HTMLElement;
  fileField: HTMLElement;
  submit: HTMLButtonElement;
  error: HTMLElement;
  status: HTMLElement;
}

class ShownError extends Error {}

const form = document.getElementById("key-sign-in");
if (form instanceof HTMLFormElement) wire(form);

function wire(form: HTMLFormElement) {
  const get = <T extends HTMLElement>(selector: string) => {
    const el = form.querySelector<T>(selector);
    if (!el) throw new Error(`key sign-in form lacks ${selector}`);
    return el;
  };
  const ui: Elements = {
    form,
    file: get("#backup-file"),
    password: get("#backup-password"),
    choice: get("#identity-choice"),
    choiceField: get("#identity-choice-field"),
    fileField: get("#backup-file-field"),
    submit: get("button[type=submit]"),
    error: get("#key-sign-in-error"),
    status: get("#key-sign-in-status"),
  };
  for (const radio of form.querySelectorAll<HTMLInputElement>("input[name=backup-source]")) {
    radio.addEventListener("change", () => {
      ui.fileField.hidden = source(form) !== "file";
      resetChoice(ui);
    });
  }
  ui.file.addEventListener("change", () => resetChoice(ui));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void signIn(ui);
  });
  form.hidden = false;
}

function source(form: HTMLFormElement): "file" | "cloud" {
  const checked = form.querySelector<HTMLInputElement>("input[name=backup-source]:checked");
  return checked?.value === "cloud" ? "cloud" : "file";
}

function resetChoice(ui: Elements) {
  ui.choice.replaceChildren();
  ui.choiceField.hidden = true;
}

function show(ui: Elements, error: string | null, status = "") {
  ui.error.textContent = error ?? "";
  ui.error.hidden = !error;
  ui.status.textContent = status;
}

async function signIn(ui: Elements) {
  const data = ui.form.dataset;
  ui.submit.disabled = true;
  show(ui, null, "Opening your backup on this device…");
  try {
    const { ciphertext, preferred } = source(ui.form) === "cloud" ? await cloudBackup(data.backupPath ?? "/api/backup") : await fileBackup(ui.file);
    if (!ui.password.value) throw new ShownError("Type your backup password.");
    let identities: IdentityKey[];
    try {
      identities = identitiesIn(await openBackup(ciphertext, ui.password.value));
    } catch (err) {
      if (err instanceof BackupError && err.problem === "undecryptable") ui.password.value = "";
      throw err;
    }
    const identity = chosen(ui, identities, preferred);
    if (!identity) return;

    show(ui, null, "Signing in…");
    const signInPath = data.signInPath ?? "/api/auth/sign-in/sigma";
    // Spec, Authentication rule 2: the compact body with the single key bapId, a token for the
    // sign-in path over exactly these bytes, and the same bytes posted. The token names this
    // server's absolute URL (the host-bound form), so it cannot be relayed to, or from, another
    // service that has the same route (lib/bitcoin-auth.ts).
    const body = JSON.stringify({ bapId: identity.bapId });
    const token = getAuthToken({ privateKeyWif: identity.key.toWif(), requestPath: new URL(signInPath, location.origin).href, body });
    ui.password.value = "";
    const res = await fetch(signInPath, {
      method: "POST",
      credentials: "same-origin",
      cache: "no-store",
      headers: { "content-type": "application/json", accept: "application/json", "x-auth-token": token },
      body,
    });
    if (!res.ok) throw new ShownError(await refusal(res));
    const oauthQuery = data.oauthQuery;
    // Two-factor is on for this account: no session yet, a short-lived two-factor cookie instead.
    // The code step (a server page) takes the pending authorization along and resumes it.
    const answer = (await res.json().catch(() => null)) as { twoFactorRedirect?: unknown } | null;
    if (answer?.twoFactorRedirect === true) {
      const step = data.twoFactorPath ?? "/sign-in/two-factor";
      location.assign(oauthQuery ? `${step}?${oauthQuery}` : step);
      return;
    }

    show(ui, null, "Signed in. Returning to the application…");
    let next = data.done ?? "/";
    if (oauthQuery) {
      try {
        next = await continueAuthorization(oauthQuery, {
          continuePath: data.continuePath ?? "/api/auth/oauth2/continue",
          authorizePath: data.authorizePath ?? "/api/auth/oauth2/authorize",
          signInPath: location.pathname,
        });
      } catch {
        throw new ShownError("You are signed in, but the application's request has expired. Go back to the application and start again.");
      }
    }
    location.assign(next);
  } catch (err) {
    const message = err instanceof ShownError ? err.message : err instanceof BackupError ? PROBLEM_WORDS[err.problem] : "Something went wrong on this page. Try again.";
    show(ui, message);
  } finally {
    ui.submit.disabled = false;
  }
}

async function fileBackup(input: HTMLInputElement): Promise<{ ciphertext: string; preferred: string | null }> {
  const file = input.files?.[0];
  if (!file) throw new ShownError("Choose your backup file.");
  if (file.size > MAX_BACKUP_CHARS) throw new ShownError("That file is too large to be an identity backup.");
  return { ciphertext: await file.text(), preferred: null };
}

/** The signed-in account's stored (still encrypted) backup: GET /api/backup with the session. */
async function cloudBackup(path: string): Promise<{ ciphertext: string; preferred: string | null }> {
  const res = await fetch(path, { credentials: "same-origin", cache: "no-store", headers: { accept: "application/json" } });
  const data = (await res.json().catch(() => null)) as { backup?: unknown; bapId?: unknown } | null;
  if (res.status === 404) throw new ShownError("There is no cloud backup for your identity. Choose a backup file instead.");
  if (!res.ok || typeof data?.backup !== "string") throw new ShownError("Your cloud backup could not be fetched. Choose a backup file instead.");
  return { ciphertext: data.backup, preferred: typeof data.bapId === "string" ? data.bapId : null };
}

/**
 * The identity to sign in as. One is used as is; with several, the person picks (the list is
 * filled from the decrypted backup, and the next submit decrypts again and uses the pick).
 */
function chosen(ui: Elements, identities: IdentityKey[], preferred: string | null): IdentityKey | null {
  if (identities.length === 1) return identities[0]!;
  const picked = ui.choiceField.hidden ? null : identities.find((i) => i.bapId === ui.choice.value);
  if (picked) return picked;
  ui.choice.replaceChildren(
    ...identities.map((identity) => {
      const option = document.createElement("option");
      option.value = option.textContent = identity.bapId;
      option.selected = identity.bapId === preferred;
      return option;
    }),
  );
  ui.choiceField.hidden = false;
  show(ui, null, "This backup holds several identities. Choose one, then sign in.");
  ui.choice.focus();
  return null;
}

/** The server's refusal in words (better-auth's `{code, message}` bodies). */
async function refusal(res: Response): Promise<string> {
  const data = (await res.json().catch(() => null)) as { code?: unknown } | null;
  if (res.status === 403 && data?.code === "IDENTITY_SUSPENDED") return "This identity is suspended on its account. Its owner must confirm it on the account page first.";
  if (res.status === 403 && data?.code === "RESTORE_PROFILE_NOT_FOUND") return "No registered identity matches this backup. Create an account with this identity first, or use another backup.";
  if (res.status === 401) return "The server did not accept the signature. Check that this device's clock is right, then try again.";
  if (res.status === 429) return "Too many attempts. Wait a minute and try again.";
  if (res.status === 403) return "This identity cannot sign in.";
  return "Sign-in failed. Try again.";
}

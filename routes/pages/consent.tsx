import { BACKUP_SCOPES } from "../../plugins/backup/index.js";
import { Layout } from "./layout.js";

/** Each scope in words, for the person deciding. */
export const SCOPE_WORDS: Record<string, string> = {
  openid: "Know who you are (your account identifier)",
  profile: "See your profile: name, picture and your selected BAP identity",
  email: "See your e-mail address",
  offline_access: "Stay signed in and act for you while you are away",
  [BACKUP_SCOPES.read]: "See whether your encrypted backup exists, when it last changed, and which sign-in accounts can recover it",
  [BACKUP_SCOPES.write]: "Replace your encrypted backup with a new copy, and choose a sign-in account that can recover it",
};

export interface IdentityChoice {
  bapId: string;
  name: string | null;
  selected: boolean;
}

export function ConsentPage(props: { clientName: string; clientUri?: string | null; icon?: string | null; scopes: string[]; oauthQuery: string; identities?: IdentityChoice[] }) {
  return (
    <Layout title={`Allow ${props.clientName}?`}>
      <div class="row">
        {props.icon ? <img class="icon" src={props.icon} alt="" /> : null}
        <h1>
          {props.clientName} wants to access your account
        </h1>
      </div>
      {props.clientUri ? <p class="muted">{props.clientUri}</p> : null}
      <p>It will be able to:</p>
      <ul class="scopes">
        {props.scopes.map((scope) => (
          <li>{SCOPE_WORDS[scope] ?? scope}</li>
        ))}
      </ul>
      <form method="post" action="/consent">
        <input type="hidden" name="oauth_query" value={props.oauthQuery} />
        {props.identities?.length ? (
          <fieldset>
            <legend>Which identity should {props.clientName} see?</legend>
            {props.identities.map((identity) => (
              <label class="choice">
                <input type="radio" name="bap_id" value={identity.bapId} checked={identity.selected} /> {identity.name ? `${identity.name} (${identity.bapId})` : identity.bapId}
              </label>
            ))}
          </fieldset>
        ) : null}
        <div class="row">
        <button type="submit" name="decision" value="allow">
          Allow
        </button>
        <button type="submit" name="decision" value="deny" class="secondary">
          Deny
        </button>
        </div>
      </form>
    </Layout>
  );
}

/** `description` is always our own wording (routes/pages/error-words.ts for the /error page), never request text. */
export function ErrorPage(props: { error: string | null; description?: string | null }) {
  return (
    <Layout title="Something is wrong with this request">
      <h1>Something is wrong with this request</h1>
      <p class="error" role="alert">
        {props.description || "The application sent an invalid request."}
      </p>
      <p class="muted">
        {props.error ? (
          <>
            Error code: <code>{props.error}</code>.{" "}
          </>
        ) : null}
        Go back to the application and try again; if it keeps happening, tell its developers.
      </p>
    </Layout>
  );
}

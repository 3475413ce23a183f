import { BACKUP_SCOPES } from "../../plugins/backup/index.js";
import { MACHINE_SCOPES } from "../../plugins/machine-clients/index.js";
import { DecisionForm, Layout } from "./layout.js";

/** Each scope in words, for the person deciding. */
export const SCOPE_WORDS: Record<string, string> = {
  openid: "Know who you are (your account identifier)",
  profile: "See your profile: name, picture and your selected BAP identity",
  email: "See your e-mail address",
  offline_access: "Stay signed in and act for you while you are away",
  [BACKUP_SCOPES.read]: "See whether your encrypted backup exists, when it last changed, and which sign-in accounts can recover it",
  [BACKUP_SCOPES.write]: "Replace your encrypted backup with a new copy, and choose a sign-in account that can recover it",
  [MACHINE_SCOPES.service]: "Read this service's public description (nothing of your account)",
};

/** The scopes asked for, in words (`ul.scopes`): the consent and device pages, the account's apps. */
export function ScopeList(props: { scopes: string[] }) {
  return (
    <ul class="scopes">
      {props.scopes.map((scope) => (
        <li>{SCOPE_WORDS[scope] ?? scope}</li>
      ))}
    </ul>
  );
}

export interface IdentityChoice {
  bapId: string;
  name: string | null;
  selected: boolean;
}

/**
 * Where the authorization code goes, as the consent page states it: registration is open, so
 * the client's name is only what it calls itself; the redirect URI's origin is what the code
 * will actually reach.
 */
export interface Destination {
  /** The redirect URI's origin (`https://app.example.com`), or its scheme for a native app's private-use URI. */
  shown: string;
  /** A domain verification in force ties this host to the client (plugins/domain-verification). */
  verified: boolean;
  /** localhost or a loopback address: an app on this device (RFC 8252 §7.3; MCP clients). */
  loopback: boolean;
}

/** The destination, and the one honest sentence about who stands behind it. */
function DestinationNote(props: { destination: Destination }) {
  const { shown, verified, loopback } = props.destination;
  return (
    <>
      <p>
        If you allow, you will be sent back to <strong>{shown}</strong>.
      </p>
      {verified ? (
        <p class="notice">Verified: the owner of this app has proved control of {shown}.</p>
      ) : (
        <p class="muted">Unverified app: nobody has proved who runs {shown}. The name above is what the app calls itself.</p>
      )}
      {loopback ? (
        <p class="warning" role="note">
          This address is on your own device (localhost). Allow only if you started this app yourself just now.
        </p>
      ) : null}
    </>
  );
}

/**
 * The resources (RFC 8707) the access will be for: other services, named by their URL, that
 * will accept what the app gets. Our own are named in words; any other by its full URL, with
 * its host in bold, since the host is who receives the token.
 */
export interface ResourceShown {
  url: string;
  host: string;
  /** Words for one of ours (the MCP server), else null. */
  ours: string | null;
}

function ResourceList(props: { resources: ResourceShown[] }) {
  return (
    <>
      <p>{props.resources.length === 1 ? "This access is for the service at:" : "This access is for the services at:"}</p>
      <ul class="resources">
        {props.resources.map((r) => (
          <li>
            {r.ours ? (
              <>
                {r.ours} (<code>{r.url}</code>)
              </>
            ) : (
              <>
                <strong>{r.host}</strong> (<code>{r.url}</code>)
              </>
            )}
          </li>
        ))}
      </ul>
      {props.resources.some((r) => !r.ours) ? <p class="muted">Each of these services will be able to act with this access. Allow only services you expect this app to use.</p> : null}
    </>
  );
}

/** RFC 9396 authorization details, one sentence each: exactly what this one grant allows, and no more. */
function DetailList(props: { details: string[] }) {
  return (
    <>
      <p>For this request only, it asks to:</p>
      <ul class="details">
        {props.details.map((sentence) => (
          <li>{sentence}</li>
        ))}
      </ul>
    </>
  );
}

export function ConsentPage(props: { clientName: string; clientUri?: string | null; icon?: string | null; scopes: string[]; oauthQuery: string; identities?: IdentityChoice[]; destination?: Destination | null; resources?: ResourceShown[]; details?: string[] }) {
  return (
    <Layout title={`Allow ${props.clientName}?`}>
      <div class="row">
        {props.icon ? <img class="icon" src={props.icon} alt="" /> : null}
        <h1>
          {props.clientName} wants to access your account
        </h1>
      </div>
      {props.clientUri ? <p class="muted">{props.clientUri}</p> : null}
      {props.destination ? <DestinationNote destination={props.destination} /> : null}
      <p>It will be able to:</p>
      <ScopeList scopes={props.scopes} />
      {props.details?.length ? <DetailList details={props.details} /> : null}
      {props.resources?.length ? <ResourceList resources={props.resources} /> : null}
      <DecisionForm action="/consent" fields={{ oauth_query: props.oauthQuery }} yes="allow" yesLabel="Allow">
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
      </DecisionForm>
    </Layout>
  );
}

import { describeAuthorizationDetails } from "../../plugins/authorization-details/details.js";
import type { AuthorizationDetail } from "../../plugins/authorization-details/types.js";
import { sectionHref } from "./account/pages.js";
import { ScopeList } from "./consent-page.js";
import { DecisionForm, DonePage, ErrorNote, Layout } from "./layout.js";

/** A CIBA request as the person sees it. */
export interface CibaRequestView {
  id: string;
  clientName: string;
  clientUri: string | null;
  bindingMessage: string | null;
  scopes: string[];
  /** RFC 9396 authorization_details, as checked when the request was made. */
  details: AuthorizationDetail[];
  expiresAt: Date;
  /** The request asks for a passkey or identity-key sign-in (acr phr). */
  strong: boolean;
  /** This session is such a sign-in, recent enough. */
  strongSession: boolean;
}

/** Each authorization the client asks for, in words (plugins/authorization-details, as on the consent page). */
function DetailsList(props: { details: CibaRequestView["details"] }) {
  if (!props.details.length) return null;
  return (
    <>
      <p>It asks in particular for:</p>
      <ul class="details">
        {describeAuthorizationDetails(props.details).map((words) => (
          <li>{words}</li>
        ))}
      </ul>
    </>
  );
}

/** GET /ciba/<id>: who asks, the binding message to compare, what for, and the decision. */
export function CibaConfirmPage(props: { request: CibaRequestView; error?: string | null; strongSignInHref: string }) {
  const r = props.request;
  const needsStrong = r.strong && !r.strongSession;
  return (
    <Layout title={`Approve ${r.clientName}?`}>
      <h1>Approve {r.clientName}?</h1>
      {r.clientUri ? <p class="muted">{r.clientUri}</p> : null}
      <ErrorNote message={props.error} />
      {r.bindingMessage ? (
        <p>
          Check that the application shows this message: <strong id="binding-message">{r.bindingMessage}</strong>. If it does not, deny: someone else may be asking in your name.
        </p>
      ) : (
        <p>The application sent no message to compare. Approve only if you started this yourself.</p>
      )}
      <p>{r.clientName} will be able to:</p>
      <ScopeList scopes={r.scopes} />
      <DetailsList details={r.details} />
      <p class="muted">This request expires at {r.expiresAt.toISOString().replace("T", " ").slice(0, 16)} UTC.</p>
      {needsStrong ? (
        <p class="notice" role="status">
          This request must be approved with a passkey or your identity key. <a href={props.strongSignInHref}>Sign in with a passkey or your identity key</a>, then come back to this page. You can deny it now.
        </p>
      ) : null}
      <DecisionForm action={`/ciba/${encodeURIComponent(r.id)}`} fields={{}} yes="approve" yesLabel="Approve" />
    </Layout>
  );
}

/** No such request for this person: unknown, someone else's, answered or expired alike. */
export function CibaGonePage() {
  return (
    <Layout title="Request not found">
      <h1>Request not found</h1>
      <p>This request does not exist, was answered already, or has expired. Nothing more to do here.</p>
      <p>
        <a href={sectionHref("approvals")}>Your pending requests</a>
      </p>
    </Layout>
  );
}

export const CibaDonePage = (props: { approved: boolean }) => (
  <DonePage approved={props.approved} approvedTitle="Request approved" approvedText="The application has been told and can continue. You can close this page." deniedText="The application was not given access. You can close this page." />
);

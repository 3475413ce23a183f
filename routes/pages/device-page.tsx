import { ScopeList } from "./consent-page.js";
import { CodeEntryForm, DecisionForm, DonePage, ErrorNote, Layout } from "./layout.js";

/** Step 1 (RFC 8628 §3.3): the person types the code their device shows, or confirms a prefilled one. */
export function DeviceCodeEntryPage(props: { code?: string; error?: string | null }) {
  return (
    <Layout title="Connect a device">
      <h1>Connect a device</h1>
      <ErrorNote message={props.error} />
      <p>Enter the code shown on the device or application you are signing in to.</p>
      <CodeEntryForm action="/device" name="user_code" code={props.code} />
    </Layout>
  );
}

/** Step 2: who is asking and for what, and the person's decision. */
export function DeviceConfirmPage(props: { code: string; clientName: string; clientUri?: string | null; scopes: string[] }) {
  return (
    <Layout title={`Connect ${props.clientName}?`}>
      <h1>Connect {props.clientName}?</h1>
      {props.clientUri ? <p class="muted">{props.clientUri}</p> : null}
      <p>
        Check that your device shows this code: <strong id="device-code">{props.code}</strong>. If it does not, deny: someone may be trying to get into your account.
      </p>
      <p>{props.clientName} will be able to:</p>
      <ScopeList scopes={props.scopes} />
      <DecisionForm action="/device" fields={{ user_code: props.code }} yes="approve" yesLabel="Approve" />
    </Layout>
  );
}

/** Step 3: the answer; the device learns it at its next poll. */
export const DeviceDonePage = (props: { approved: boolean }) => (
  <DonePage approved={props.approved} approvedTitle="Device connected" approvedText="You can go back to your device: it will finish signing in by itself." deniedText="The device was not given access. You can close this page." />
);

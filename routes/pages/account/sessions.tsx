import { describeUserAgent, Section, When } from "./format.js";
import type { SessionRow } from "./queries.js";

export function ProfileSection(props: { name: string; email: string; emailVerified: boolean }) {
  return (
    <Section id="profile" title="Profile and e-mail">
      <form method="post" action="/account/profile">
        <label for="profile-name">Name</label>
        <input id="profile-name" name="name" type="text" autocomplete="name" maxlength={200} required value={props.name} />
        <button type="submit">Save name</button>
      </form>
      <p>
        Your e-mail address is <strong>{props.email}</strong> {props.emailVerified ? "(verified)." : "(not verified)."}
      </p>
      <form method="post" action="/account/email">
        <label for="profile-email">New e-mail address</label>
        <input id="profile-email" name="email" type="email" autocomplete="email" required />
        <label for="profile-email-password">Your password</label>
        <input id="profile-email-password" name="password" type="password" autocomplete="current-password" />
        <p class="muted">Not needed if you signed in a few minutes ago. The new address gets a link; the change happens when you follow it.</p>
        <button type="submit">Change e-mail</button>
      </form>
    </Section>
  );
}

export function SessionsSection(props: { sessions: SessionRow[]; currentSessionId: string }) {
  const others = props.sessions.filter((s) => s.id !== props.currentSessionId);
  return (
    <Section id="sessions" title="Where you are signed in">
      <table>
        <thead>
          <tr>
            <th scope="col">Device</th>
            <th scope="col">Signed in</th>
            <th scope="col">Last active</th>
            <th scope="col">
              <span class="muted">Action</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.sessions.map((s) => {
            const device = describeUserAgent(s.userAgent);
            const current = s.id === props.currentSessionId;
            return (
              <tr data-session-id={s.id}>
                <td>
                  {device}
                  {s.ipAddress ? <span class="muted"> · {s.ipAddress}</span> : null}
                  {current ? <strong> (this device)</strong> : null}
                </td>
                <td>
                  <When at={s.createdAt} />
                </td>
                <td>
                  <When at={s.updatedAt} />
                </td>
                <td>
                  {current ? (
                    <form method="post" action="/account/sign-out" class="inline">
                      <button type="submit" class="secondary">
                        Sign out
                      </button>
                    </form>
                  ) : (
                    <form method="post" action="/account/sessions/revoke" class="inline">
                      <input type="hidden" name="session_id" value={s.id} />
                      <button type="submit" class="secondary" aria-label={`Sign out ${device}, signed in ${s.createdAt.toISOString().slice(0, 16)}`}>
                        Sign out
                      </button>
                    </form>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {others.length ? (
        <form method="post" action="/account/sessions/revoke-others">
          <button type="submit" class="secondary">
            Sign out all other sessions
          </button>
        </form>
      ) : null}
    </Section>
  );
}

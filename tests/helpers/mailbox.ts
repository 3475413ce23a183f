import type { Mail } from "../../lib/mailer.js";
import type { TestServer } from "./server.js";

/** Captures what the server mails: pass `mailer` to startTestServer's options (start(config, { mailer })). */
export function mailbox() {
  const mails: Mail[] = [];
  return {
    mails,
    mailer: async (mail: Mail) => {
      mails.push(mail);
    },
    /** The newest mail to `to` whose subject matches, waiting briefly for background sends. */
    async latest(to: string, subject: RegExp): Promise<Mail> {
      for (let i = 0; i < 50; i++) {
        const found = mails.filter((m) => m.to === to && subject.test(m.subject)).at(-1);
        if (found) return found;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`no mail to ${to} matching ${subject}; got ${JSON.stringify(mails.map((m) => [m.to, m.subject]))}`);
    },
    count(to: string) {
      return mails.filter((m) => m.to === to).length;
    },
  };
}
export type Mailbox = ReturnType<typeof mailbox>;

/** The first link in a mail. */
export function linkIn(mail: Mail): URL {
  const match = mail.text.match(/https?:\/\/\S+/);
  if (!match) throw new Error(`no link in mail: ${mail.text}`);
  return new URL(match[0]);
}

/** Forgot-password as the mailbox owner does it: request the mail, follow its link, set a new password. */
export async function resetPasswordByMail(server: TestServer, box: Mailbox, email: string, newPassword: string) {
  const asked = await server.api("/api/auth/request-password-reset", { body: { email, redirectTo: "/reset-password" } });
  if (asked.status !== 200) throw new Error(`reset request failed: ${asked.status} ${asked.text}`);
  const link = linkIn(await box.latest(email, /reset/i));
  const follow = await server.api(link.pathname + link.search);
  const token = new URL(follow.headers.get("location")!, server.url).searchParams.get("token");
  return server.api("/api/auth/reset-password", { body: { token, newPassword } });
}

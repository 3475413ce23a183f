import { Hono } from "hono";
import * as v from "valibot";
import { TIERS, type TierId } from "../../../plugins/subscriptions/tiers.js";
import { readForm } from "../form-replay.js";
import type { PageContext, PageEnv } from "../page-env.js";
import { Section } from "./format.js";
import { accountForm, backWithError, backWithNotice } from "./outcome.js";

/**
 * "Contact support" (Plus and Pro): a plain form posted to /account/support, sent to
 * SUPPORT_EMAIL with the tier in the subject (Pro marked priority) and the person's address to
 * reply to, and a copy to the person. Counted per person (lib/limits.ts `supportMessage`).
 * The free plan sees where to read instead; without SUPPORT_EMAIL the section says so.
 */
export interface SupportView {
  tier: TierId;
  /** Whether SUPPORT_EMAIL is set. */
  configured: boolean;
  email: string;
}

function SelfHelp() {
  return (
    <p>
      Read the <a href="/api/reference">API reference</a> and <a href="/llms.txt">/llms.txt</a>, the orientation for developers and agents.
    </p>
  );
}

export function SupportSection(props: { view: SupportView }) {
  const { tier, configured, email } = props.view;
  if (tier === "free") {
    return (
      <Section id="support" title="Help and support">
        <SelfHelp />
        <p class="muted">E-mail support comes with the {TIERS.plus.name} and {TIERS.pro.name} plans.</p>
      </Section>
    );
  }
  if (!configured) {
    return (
      <Section id="support" title="Help and support">
        <p>Support by e-mail is not set up on this server yet.</p>
        <SelfHelp />
      </Section>
    );
  }
  return (
    <Section id="support" title="Contact support">
      <p class="muted">
        {tier === "pro" ? "As a Pro member your message is marked priority. " : ""}We answer to {email}, and send you a copy of your message.
      </p>
      <form method="post" action="/account/support">
        <label for="support-topic">Topic</label>
        <input id="support-topic" name="topic" type="text" maxlength={150} required />
        <label for="support-message">Message</label>
        <textarea id="support-message" name="message" rows={6} maxlength={5000} required></textarea>
        <button type="submit">Send to support</button>
      </form>
    </Section>
  );
}

/** One line, no control characters (it becomes the mail's subject). */
const SupportForm = v.object({
  topic: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(150), v.regex(/^[^\p{Cc}]+$/u)),
  // A form sends a textarea's line breaks as CRLF (HTML's form encoding); the mail's text has LF.
  message: v.pipe(v.string(), v.transform((s) => s.replace(/\r\n?/g, "\n")), v.trim(), v.minLength(1), v.maxLength(5000)),
});

/** The subject support sees: the tier first, Pro marked priority. */
export function supportSubject(tier: Exclude<TierId, "free">, topic: string): string {
  return tier === "pro" ? `[Pro, priority] ${topic}` : `[Plus] ${topic}`;
}

async function sendToSupport(c: PageContext) {
  const { page, session } = c.var;
  const form = v.safeParse(SupportForm, await readForm(c));
  if (!form.success) return backWithError(null, "support", "INVALID_INPUT");
  const tier = await page.billing.tiers.tierOf(session.user.id);
  if (tier === "free") return backWithError(null, "support", "TIER_REQUIRED");
  if (!page.support.email) return backWithError(null, "support", "SUPPORT_NOT_CONFIGURED");
  if (page.support.limiter && !(await page.support.limiter.hit(session.user.id)).allowed) return backWithError(null, "support", "RATE_LIMITED");
  const { topic, message } = form.output;
  const user = session.user;
  const from = `${user.name} <${user.email}> (user ${user.id}, ${TIERS[tier].name} plan)`;
  try {
    await page.support.mailer({ to: page.support.email, replyTo: user.email, subject: supportSubject(tier, topic), text: `From: ${from}\n\n${message}\n` });
    await page.support.mailer({
      to: user.email,
      subject: `Your message to support: ${topic}`,
      text: `We received your message and will answer to this address.\n\nTopic: ${topic}\n\n${message}\n`,
    });
  } catch (err) {
    page.logger?.error("support message not sent", { err, userId: user.id });
    return backWithError(null, "support", "SUPPORT_NOT_SENT");
  }
  return backWithNotice(null, "support-sent", "support");
}

/** Mounted at /account. */
export const supportRoutes = new Hono<PageEnv>().post("/support", ...accountForm, sendToSupport);

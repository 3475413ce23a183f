import nodemailer from "nodemailer";
import type { Logger } from "./logger.js";

export interface Mail {
  to: string;
  subject: string;
  text: string;
  /** Where an answer goes when it is not the sender (the support form: the person who wrote). */
  replyTo?: string;
  /** The sender's display name in place of MAIL_FROM's (a white-label client's name); MAIL_FROM's address stays. */
  fromName?: string;
}
export type Mailer = (mail: Mail) => Promise<void>;

/**
 * SMTP when `SMTP_URL` is set. Without it (lib/env.ts allows that outside production only, or
 * with MAIL_DISABLED=true) the links in a mail are credentials and stay out of the log
 * (OWASP ASVS V7.1.1): with mail disabled a mail is dropped with a line that names only its
 * subject; while developing its text is written at debug level, where a developer finds the link.
 */
export function createMailer(opts: { smtpUrl: string | undefined; from: string; logger: Logger; disabled?: boolean }): Mailer {
  if (opts.disabled) return async (mail) => opts.logger.warn("mail not sent (MAIL_DISABLED=true)", { subject: mail.subject });
  if (!opts.smtpUrl) {
    return async (mail) => opts.logger.debug("mail (SMTP_URL not set, not sent)", { to: mail.to, subject: mail.subject, text: mail.text });
  }
  const transport = nodemailer.createTransport(opts.smtpUrl);
  const address = senderAddress(opts.from);
  return async ({ fromName, ...mail }) => {
    // nodemailer quotes the name itself: a brand's name cannot add a header or an address.
    await transport.sendMail({ from: fromName ? { name: fromName, address } : opts.from, ...mail });
  };
}

/** The address of MAIL_FROM (`Name <address>` or a bare address). */
export function senderAddress(from: string): string {
  return /<([^<>]+)>\s*$/.exec(from)?.[1] ?? from.trim();
}

import nodemailer from "nodemailer";
import type { Logger } from "./logger.js";

export interface Mail {
  to: string;
  subject: string;
  text: string;
  /** Where an answer goes when it is not the sender (the support form: the person who wrote). */
  replyTo?: string;
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
  return async (mail) => {
    await transport.sendMail({ from: opts.from, ...mail });
  };
}

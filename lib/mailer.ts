import nodemailer from "nodemailer";
import type { Logger } from "./logger.js";

export interface Mail {
  to: string;
  subject: string;
  text: string;
}
export type Mailer = (mail: Mail) => Promise<void>;

/**
 * SMTP when `SMTP_URL` is set; otherwise the message is written to the log, which is
 * what a developer wants on a laptop (the link is right there).
 */
export function createMailer(opts: { smtpUrl: string | undefined; from: string; logger: Logger }): Mailer {
  if (!opts.smtpUrl) {
    return async (mail) => opts.logger.info("mail (SMTP_URL not set, not sent)", { to: mail.to, subject: mail.subject, text: mail.text });
  }
  const transport = nodemailer.createTransport(opts.smtpUrl);
  return async (mail) => {
    await transport.sendMail({ from: opts.from, ...mail });
  };
}

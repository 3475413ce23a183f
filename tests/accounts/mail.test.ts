import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signUp } from "../helpers/oauth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/** A real SMTP peer on loopback: the server sends through nodemailer when SMTP_URL is set. */
const received: Array<{ from: string; to: string[]; data: string }> = [];
let smtp: SMTPServer;
let smtpPort = 0;
let server: TestServer;

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    onData(stream, session, callback) {
      let data = "";
      stream.on("data", (chunk: Buffer) => (data += chunk.toString("utf8")));
      stream.on("end", () => {
        received.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "", to: session.envelope.rcptTo.map((r) => r.address), data });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()));
  smtpPort = (smtp.server.address() as { port: number }).port;
  server = await startTestServer({ SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, MAIL_FROM: "Identity <id@example.com>" });
});
afterAll(async () => {
  await server?.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

describe("e-mail over SMTP", () => {
  it("sends the password-reset mail through the configured SMTP server", async () => {
    const person = await signUp(server);
    const res = await server.api("/api/auth/request-password-reset", { body: { email: person.email, redirectTo: `${server.url}/reset-password` } });
    expect(res.status).toBe(200);
    for (let i = 0; i < 50 && !received.some((m) => m.to.includes(person.email)); i++) await new Promise((r) => setTimeout(r, 100));
    const mail = received.find((m) => m.to.includes(person.email));
    expect(mail).toBeDefined();
    expect(mail!.from).toBe("id@example.com");
    expect(mail!.data).toMatch(/Subject: Reset your password/);
    expect(mail!.data).toMatch(/reset-password/);
  });
});

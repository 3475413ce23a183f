import type { GenericEndpointContext } from "@better-auth/core";
import type { CibaOptions } from "./options.js";

/**
 * Tells the person a request waits for them: an e-mail with the link to our approval page (the
 * account page lists it too). Sent in the background: the client's answer does not wait for
 * the mail server, and a failed send is logged, not the client's error.
 */
export function notifyPerson(options: CibaOptions, ctx: GenericEndpointContext, request: { id: string; userId: string; clientName: string; bindingMessage: string | null }): void {
  void (async () => {
    const user = await ctx.context.internalAdapter.findUserById(request.userId);
    if (!user?.email) return;
    const message = request.bindingMessage ? `\n\nIt shows this message: "${request.bindingMessage}". Approve only if your device shows the same.` : "";
    await options.send({
      to: user.email,
      subject: `${request.clientName} asks for your approval`,
      text: `${request.clientName} asks for your approval. Review it and approve or deny: ${options.approvalUrl(request.id)}${message}\n\nIf you did not expect this, deny it.`,
    });
  })().catch((err: unknown) => options.logger.warn("ciba: the approval mail was not sent", { err, request: request.id }));
}

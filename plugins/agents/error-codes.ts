/**
 * Our agent-auth additions' error codes, in agent-auth's own catalog shape (its
 * AGENT_AUTH_ERROR_CODES: `{code, message}`, answered as `{error, message}` by `agentError`).
 * The plugin exposes them with agent-auth's own as `$ERROR_CODES`.
 */
export const AGENT_ERROR_CODES = {
  /** The agent, or the host it runs on, was paused by its owner. */
  AGENT_PAUSED: { code: "agent_paused", message: "This agent is paused by its owner." },
  HOST_PAUSED: { code: "host_paused", message: "This host is paused by its owner." },
  /** The agent acts for nobody (an unclaimed autonomous agent): no account data to act on. */
  OWNER_REQUIRED: { code: "owner_required", message: "This agent acts for no account yet: have a person claim it first." },
  /** The capability's arguments do not match its input schema. */
  INVALID_ARGUMENTS: { code: "invalid_arguments", message: "The arguments are invalid." },
  /** A capability refused by our own routes' rules (a problem without a code of its own). */
  REQUEST_FAILED: { code: "request_failed", message: "The request could not be completed." },
  /** No pending approval request has that user code. */
  APPROVAL_NOT_FOUND: { code: "approval_not_found", message: "No pending request has that code." },
  APPROVAL_EXPIRED: { code: "approval_expired", message: "That code has expired." },
} as const satisfies Record<string, { readonly code: string; readonly message: string }>;

/** `error` members of our agent-auth additions, in agent-auth's own `{error, message}` shape. */
export const AGENT_ERROR_CODES = {
  /** The agent, or the host it runs on, was paused by its owner. */
  AGENT_PAUSED: "agent_paused",
  HOST_PAUSED: "host_paused",
  /** The agent acts for nobody (an unclaimed autonomous agent): no account data to act on. */
  OWNER_REQUIRED: "owner_required",
  /** The capability's arguments do not match its input schema. */
  INVALID_ARGUMENTS: "invalid_arguments",
  /** No pending approval request has that user code. */
  APPROVAL_NOT_FOUND: "approval_not_found",
  APPROVAL_EXPIRED: "approval_expired",
} as const;

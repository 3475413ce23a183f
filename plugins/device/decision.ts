import type { GenericEndpointContext } from "@better-auth/core";
import { APIError, createAuthEndpoint, getAuthoritativeSessionFromCtx } from "better-auth/api";
import type { oauthDeviceAuthorization } from "@better-auth/oauth-provider";

type DeviceEndpoints = ReturnType<typeof oauthDeviceAuthorization>["endpoints"];
type DecisionEndpoint = DeviceEndpoints["deviceApprove"] | DeviceEndpoints["deviceDeny"];

/** better-auth's wording (device-authorization's DEVICE_AUTHORIZATION_ERROR_CODES), kept for its clients. */
export const DEVICE_DECISION_ERRORS = {
  authenticationRequired: "Authentication required",
  invalidUserCode: "Invalid user code",
  expiredUserCode: "User code has expired",
  alreadyProcessed: "Device code already processed",
  notClaimed:
    "Device code has not been claimed by a verifying session; call `GET /device` with the `user_code` while signed in before approving or denying",
} as const;

interface DeviceCodeRow {
  id: string;
  userCode: string;
  userId?: string | null;
  status: string;
  expiresAt: Date;
}

/** better-auth's lookup: the code as typed, then (default alphabet) without separators, upper case. */
async function findByUserCode(ctx: GenericEndpointContext, typed: string): Promise<DeviceCodeRow | null> {
  const find = async (userCode: string) => {
    const row = await ctx.context.adapter.findOne<DeviceCodeRow>({ model: "deviceCode", where: [{ field: "userCode", value: userCode }] });
    return row?.userCode === userCode ? row : null;
  };
  const exact = await find(typed);
  if (exact) return exact;
  const normalized = typed.replace(/[^a-zA-Z0-9]/g, "").toUpperCase();
  return normalized !== typed && /^[A-HJ-NP-Z2-9]+$/.test(normalized) ? find(normalized) : null;
}

const refuse = (status: "BAD_REQUEST" | "UNAUTHORIZED" | "FORBIDDEN", error: string, description: string) => new APIError(status, { error, error_description: description });

/**
 * RFC 8628 §3.3 approve and deny, in place of device-authorization's /device/approve and
 * /device/deny (same path, body, errors and OpenAPI description). Theirs read the code, check
 * it is pending and then update it unconditionally: SQLite serialises the two, but on
 * PostgreSQL an approve and a deny sent together both read `pending` and both succeed, and the
 * device gets whichever write came last. Here the decision is one conditional write (`status`
 * still pending, the code still bound to this person) and its affected row count says whether
 * it was this request's: exactly one answer wins, every other gets 400 "already processed".
 */
export function deviceDecision(original: DecisionEndpoint, status: "approved" | "denied") {
  const verb = status === "approved" ? "approve" : "deny";
  return createAuthEndpoint(original.path, original.options, async (ctx) => {
    const session = await getAuthoritativeSessionFromCtx(ctx);
    if (!session) throw refuse("UNAUTHORIZED", "unauthorized", DEVICE_DECISION_ERRORS.authenticationRequired);
    const record = await findByUserCode(ctx, ctx.body.userCode);
    if (!record) throw refuse("BAD_REQUEST", "invalid_request", DEVICE_DECISION_ERRORS.invalidUserCode);
    if (new Date(record.expiresAt) < new Date()) throw refuse("BAD_REQUEST", "expired_token", DEVICE_DECISION_ERRORS.expiredUserCode);
    if (record.status !== "pending") throw refuse("BAD_REQUEST", "invalid_request", DEVICE_DECISION_ERRORS.alreadyProcessed);
    if (!record.userId) throw refuse("BAD_REQUEST", "invalid_request", DEVICE_DECISION_ERRORS.notClaimed);
    if (record.userId !== session.user.id) throw refuse("FORBIDDEN", "access_denied", `You are not authorized to ${verb} this device authorization`);
    const decided = await ctx.context.adapter.updateMany({
      model: "deviceCode",
      where: [
        { field: "id", value: record.id },
        { field: "status", value: "pending" },
        { field: "userId", value: session.user.id },
      ],
      update: { status },
    });
    // Another answer for this code was written between the read and this write.
    if (decided !== 1) throw refuse("BAD_REQUEST", "invalid_request", DEVICE_DECISION_ERRORS.alreadyProcessed);
    return ctx.json({ success: true });
  });
}

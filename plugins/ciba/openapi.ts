/** The OpenAPI description of the backchannel authentication endpoint (CIBA §7.1, §7.3), for better-auth's generator. */
const text = (description: string) => ({ type: "string", description });

export const BACKCHANNEL_OPENAPI = {
  description: "OpenID CIBA backchannel authentication request: ask a person to approve, then poll the token endpoint (grant_type urn:openid:params:grant-type:ciba) with auth_req_id, or wait for the ping.",
  requestBody: {
    required: true,
    content: {
      "application/x-www-form-urlencoded": {
        schema: {
          type: "object",
          required: ["scope", "login_hint"],
          properties: {
            scope: text("Space-separated scopes; must include openid"),
            login_hint: text("The person's e-mail address or BAP id"),
            binding_message: text("At most 100 printable characters on one line, shown to the person"),
            acr_values: text("phr: approval right after a passkey or identity-key sign-in"),
            requested_expiry: text("Seconds; at most CIBA_REQUEST_TTL"),
            authorization_details: text("RFC 9396: a JSON array of objects, each with a string type"),
            client_notification_token: text("Ping mode: the bearer token of the notification"),
            client_id: text("With client_secret_post or a client assertion"),
            client_secret: text("client_secret_post"),
            client_assertion: text("private_key_jwt"),
            client_assertion_type: text("urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
          },
        },
      },
    },
  },
  responses: {
    "200": {
      description: "The request is waiting for the person",
      content: {
        "application/json": {
          schema: {
            type: "object",
            required: ["auth_req_id", "expires_in", "interval"],
            properties: { auth_req_id: { type: "string" }, expires_in: { type: "integer" }, interval: { type: "integer" } },
          },
        },
      },
    },
  },
};

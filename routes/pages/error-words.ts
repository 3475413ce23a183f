/**
 * The words of the /error page. Whoever links to /error chooses its query, so the page never
 * shows text from it (content spoofing, OWASP WSTG-CLNT-03 / ASVS 5.2.x): a known code gets
 * our own sentence, anything else the generic one, and only a known code is named on the page.
 */
const ERROR_WORDS: Record<string, string> = {
  // RFC 6749 §4.1.2.1 (authorization) and §5.2 (token) error codes.
  invalid_request: "The application sent an invalid request.",
  unauthorized_client: "This application may not ask for sign-in this way.",
  access_denied: "Access was denied.",
  unsupported_response_type: "This application asked for a kind of answer we do not give.",
  invalid_scope: "This application asked for permissions that do not exist or that it may not have.",
  server_error: "Something went wrong on our side. Try again later.",
  temporarily_unavailable: "The service is busy right now. Try again later.",
  invalid_client: "This application is not registered, or could not be identified.",
  invalid_grant: "This sign-in request has expired or was already used. Start again from the application.",
  unsupported_grant_type: "This application asked for a kind of grant we do not give.",
  // OpenID Connect Core 1.0 §3.1.2.6.
  interaction_required: "You need to sign in or confirm something first. Start again from the application.",
  login_required: "You need to sign in first. Start again from the application.",
  account_selection_required: "You need to choose an account first. Start again from the application.",
  consent_required: "You need to allow this application first. Start again from the application.",
  invalid_request_uri: "The application sent an invalid request.",
  invalid_request_object: "The application sent an invalid request.",
  request_not_supported: "The application asked for something we do not support.",
  request_uri_not_supported: "The application asked for something we do not support.",
  registration_not_supported: "The application asked for something we do not support.",
  // RFC 9396 §5.
  invalid_authorization_details: "The application asked for permissions described in a way we cannot accept.",
  // @better-auth/oauth-provider and better-auth (their errorURL is our /error page).
  invalid_redirect: "The redirect address this application gave is not registered for it.",
  invalid_redirect_uri: "The redirect address this application gave is not registered for it.",
  client_disabled: "This application has been disabled.",
  invalid_signature: "This sign-in request is invalid or has expired. Start again from the application.",
  state_mismatch: "This sign-in link has expired or was opened in another browser. Start again.",
  state_not_found: "This sign-in link has expired or was opened in another browser. Start again.",
  please_restart_the_process: "This sign-in took too long. Start again.",
  invalid_callback_request: "The sign-in provider sent back an invalid answer. Start again.",
  internal_server_error: "Something went wrong on our side. Try again later.",
  unable_to_link_account: "That account could not be linked.",
  account_already_linked_to_different_user: "That account is already linked to another person here.",
  email_not_found: "The provider did not share an e-mail address, which this service needs.",
  email_not_verified: "That e-mail address is not verified.",
  email_does_not_match: "That account's e-mail address does not match yours.",
  oauth_provider_not_found: "That sign-in provider is not available.",
  no_code: "The sign-in provider sent back an invalid answer. Start again.",
  invalid_code: "The sign-in provider sent back an invalid answer. Start again.",
  unable_to_get_user_info: "The sign-in provider did not tell us who you are. Start again.",
  // Ours (routes/pages).
  invalid_consent: "This consent link is invalid or has expired. Start again from the application.",
};

const GENERIC = "This request could not be completed. Go back to the application and start again.";

/** The code to name on the page (only a known one) and the sentence for it. */
export function errorWords(code: string | null | undefined): { code: string | null; message: string } {
  const known = code && Object.hasOwn(ERROR_WORDS, code) ? code : null;
  return { code: known, message: known ? ERROR_WORDS[known]! : GENERIC };
}

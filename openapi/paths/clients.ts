import { ANALYTICS_SPANS } from "../../plugins/analytics/report.js";
import { jsonResponse, pathParameter, problemResponses, SESSION, UNAUTHORIZED, type Paths, type Schema } from "../components.js";

const counts: Schema = { type: "object", additionalProperties: { type: "integer", minimum: 0 } };
/** The JSON report (plugins/analytics/report.ts ClientAnalytics). */
const ClientAnalytics: Schema = {
  type: "object",
  required: ["clientId", "days", "from", "to", "totals", "activeGrants", "daily"],
  properties: {
    clientId: { type: "string" },
    days: { type: "integer", enum: [...ANALYTICS_SPANS] },
    from: { type: "string", format: "date", description: "First UTC day covered." },
    to: { type: "string", format: "date", description: "Last UTC day covered (today)." },
    totals: {
      type: "object",
      properties: {
        authorizations: { type: "integer", description: "Authorization codes issued." },
        people: { type: "integer", description: "Different people who signed in over the span." },
        tokens: { ...counts, description: "Tokens issued, by grant type." },
        refusals: { ...counts, description: "Refused requests, by RFC 6749 error code." },
      },
    },
    activeGrants: { type: "integer", description: "People holding a grant of the client now (a consent or a live refresh token)." },
    daily: {
      type: "array",
      description: "One entry per UTC day, oldest first, days without activity included.",
      items: {
        type: "object",
        properties: { date: { type: "string", format: "date" }, authorizations: { type: "integer" }, people: { type: "integer", description: "Different people who signed in that day (exact)." }, tokens: counts, refusals: counts },
      },
    },
  },
};

const days = { name: "days", in: "query", required: false, description: "The span: the last 7, 30 or 90 UTC days, today included.", schema: { type: "integer", enum: [...ANALYTICS_SPANS], default: 30 } };
const format = { name: "format", in: "query", required: false, description: "csv: the same report as a CSV file.", schema: { type: "string", enum: ["json", "csv"], default: "json" } };
const csv = { description: "CSV (RFC 4180): `date,metric,key,count` rows; metric authorizations, people, tokens (key: grant type), refusals (key: error code), and a last active_grants row.", content: { "text/csv": { schema: { type: "string" } } } };
const refusals = problemResponses({ 400: "days is not 7, 30 or 90, or format is not json or csv.", ...UNAUTHORIZED, 403: "Analytics come with the Pro tier (TIER_REQUIRED; the detail names your tier).", 404: "You own no client with that client_id (CLIENT_NOT_FOUND)." });

/** routes/clients/analytics.ts: per-client analytics (Pro) for the client's owner. */
export const clientPaths: Paths = {
  "/api/clients/{clientId}/analytics": {
    get: {
      tags: ["Client analytics"],
      summary: "Analytics of one of your OAuth clients: authorizations, people per day, tokens by grant type, refusals by error, active grants (Pro)",
      security: SESSION,
      parameters: [pathParameter("clientId", "The client's client_id."), days, format],
      responses: { 200: { ...jsonResponse("The report (or CSV with format=csv).", ClientAnalytics), content: { ...jsonResponse("", ClientAnalytics).content, ...csv.content } }, ...refusals },
    },
  },
  "/api/clients/{clientId}/analytics.csv": {
    get: {
      tags: ["Client analytics"],
      summary: "The same analytics as a CSV download (Pro)",
      security: SESSION,
      parameters: [pathParameter("clientId", "The client's client_id."), days],
      responses: { 200: csv, ...refusals },
    },
  },
};

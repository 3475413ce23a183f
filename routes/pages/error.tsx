import { Hono } from "hono";
import { showBrandOf } from "./brand.js";
import { ErrorPage } from "./error-page.js";
import { errorWords } from "./error-words.js";
import type { PageContext, PageEnv } from "./page-env.js";
import { html } from "./render.js";

/**
 * GET /error. Anyone can link here with any query: fixed wording per known code, never the
 * query's text. A `client_id` names the client whose brand frames the page: a brand is public
 * and the page carries no form, so a link that names one shows nothing its owner did not choose.
 */
async function showError(c: PageContext): Promise<Response> {
  await showBrandOf(c, c.req.query("client_id"));
  const { code, message } = errorWords(c.req.query("error") ?? "invalid_request");
  return html(c, <ErrorPage error={code} description={message} />, 400);
}

export const errorRoutes = new Hono<PageEnv>().get("/error", showError);

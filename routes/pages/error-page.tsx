import type { Context } from "hono";
import { Layout } from "./layout.js";
import { html } from "./render.js";

/** `description` is always our own wording (routes/pages/error-words.ts for the /error page), never request text. */
export function ErrorPage(props: { error: string | null; description?: string | null }) {
  return (
    <Layout title="Something is wrong with this request">
      <h1>Something is wrong with this request</h1>
      <p class="error" role="alert">
        {props.description || "The application sent an invalid request."}
      </p>
      <p class="muted">
        {props.error ? (
          <>
            Error code: <code>{props.error}</code>.{" "}
          </>
        ) : null}
        Go back to the application and try again; if it keeps happening, tell its developers.
      </p>
    </Layout>
  );
}

/** The answer to a form posted from another origin (page-env.ts `ownPagesOnly`). */
export function refuseForeignForm(c: Context): Response {
  return html(c, <ErrorPage error="invalid_request" description="This form must be sent from our own page." />, 403);
}

import { Hono } from "hono";
import { callAuth, nextLocation, readForm, upstreamError } from "./form-replay.js";
import { ErrorNote, Layout } from "./layout.js";
import { signedOAuthQuery } from "./oauth-query.js";
import { ownPagesOnly, type PageContext, type PageEnv } from "./page-env.js";
import { html, redirectWith, withCookiesOf } from "./render.js";
import { safeReturnPath } from "./return-to.js";
import { showBrandOfQuery } from "./brand.js";

/**
 * The second step of a password sign-in for an account with two-factor on. POST /sign-in sees
 * better-auth's `{twoFactorRedirect: true}` (no session yet, a short-lived signed two_factor
 * cookie instead) and sends the browser here, carrying the signed `oauth_query` of a pending
 * authorization (or a `return_to` path). The person types a code from their authenticator app
 * or one of their backup codes; no JavaScript.
 *
 * The code goes to /two-factor/verify-totp or /verify-backup-code with the `oauth_query`: once
 * that sets the session cookie, oauth-provider's hook resumes the authorization, exactly as it
 * does for a one-step sign-in, and its answer names where the browser goes next.
 */
export const TWO_FACTOR_PATH = "/sign-in/two-factor";

/** The two-factor step's address, keeping the pending authorization or return path. */
export function twoFactorStepUrl(oauthQuery: string | undefined, returnTo: string | null): string {
  if (oauthQuery) return `${TWO_FACTOR_PATH}?${oauthQuery}`;
  return returnTo ? `${TWO_FACTOR_PATH}?return_to=${encodeURIComponent(returnTo)}` : TWO_FACTOR_PATH;
}

/** Did better-auth answer a password sign-in with "second factor needed"? */
export async function needsSecondFactor(upstream: Response): Promise<boolean> {
  const data = (await upstream.clone().json().catch(() => null)) as { twoFactorRedirect?: unknown } | null;
  return data?.twoFactorRedirect === true;
}

type Method = "totp" | "backup";

function TwoFactorPage(props: { oauthQuery?: string; returnTo?: string | null; error?: string | null; method?: Method; expired?: boolean; signInHref: string }) {
  const hidden = (
    <>
      {props.oauthQuery ? <input type="hidden" name="oauth_query" value={props.oauthQuery} /> : null}
      {props.returnTo ? <input type="hidden" name="return_to" value={props.returnTo} /> : null}
    </>
  );
  return (
    <Layout title="Two-factor sign-in">
      <h1>Enter your sign-in code</h1>
      <ErrorNote message={props.error} />
      {props.expired ? (
        <p>
          <a href={props.signInHref}>Sign in again</a>
        </p>
      ) : (
        <>
          <form method="post" action={TWO_FACTOR_PATH}>
            {hidden}
            <input type="hidden" name="method" value="totp" />
            <label for="totp-code">Code from your authenticator app</label>
            <input id="totp-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,8}" maxlength={8} required autofocus={props.method !== "backup"} />
            <button type="submit">Verify</button>
          </form>
          <details open={props.method === "backup"}>
            <summary>Use a backup code instead</summary>
            <form method="post" action={TWO_FACTOR_PATH}>
              {hidden}
              <input type="hidden" name="method" value="backup" />
              <label for="backup-code">Backup code</label>
              <input id="backup-code" name="code" type="text" autocomplete="off" spellcheck={false} maxlength={32} required />
              <button type="submit">Use backup code</button>
            </form>
            <p class="muted">Each backup code works once.</p>
          </details>
        </>
      )}
    </Layout>
  );
}

/** What a refused code means, in words; `expired` when the person must start the sign-in again. */
function refusal(status: number, code: string | null): { message: string; expired: boolean } {
  if (code === "INVALID_TWO_FACTOR_COOKIE") return { message: "This sign-in has expired. Sign in again.", expired: true };
  if (code === "TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE") return { message: "Too many wrong codes. Sign in again.", expired: true };
  if (code === "ACCOUNT_TEMPORARILY_LOCKED") return { message: "Too many wrong codes for this account. Wait 15 minutes, then sign in again.", expired: true };
  if (status === 429) return { message: "Too many attempts. Wait a minute and try again.", expired: false };
  return { message: "That code is not right. Check it and try again.", expired: false };
}

const signInHref = (q?: string, returnTo?: string | null) => (q ? `/sign-in?${q}` : returnTo ? `/sign-in?return_to=${encodeURIComponent(returnTo)}` : "/sign-in");

async function showCodeStep(c: PageContext) {
  const search = new URL(c.req.url).searchParams;
  const q = signedOAuthQuery(search);
  await showBrandOfQuery(c, q);
  const returnTo = q ? null : safeReturnPath(search.get("return_to"));
  return html(c, <TwoFactorPage oauthQuery={q} returnTo={returnTo} signInHref={signInHref(q, returnTo)} />);
}

async function verifyCode(c: PageContext) {
  const f = await readForm(c);
  const q = f.oauth_query || undefined;
  const returnTo = q ? null : safeReturnPath(f.return_to);
  const method: Method = f.method === "backup" ? "backup" : "totp";
  // Authenticator apps show "123 456"; backup codes are compared as issued.
  const code = method === "totp" ? (f.code ?? "").replace(/\s+/g, "") : (f.code ?? "").trim();
  const path = method === "backup" ? "/two-factor/verify-backup-code" : "/two-factor/verify-totp";
  const upstream = await callAuth(c, path, { code, ...(q ? { oauth_query: q } : {}) });
  if (!upstream.ok) {
    const { message, expired } = refusal(upstream.status, (await upstreamError(upstream)).code);
    await showBrandOfQuery(c, q);
    const page = <TwoFactorPage oauthQuery={q} returnTo={returnTo} error={message} method={method} expired={expired} signInHref={signInHref(q, returnTo)} />;
    // Carry cookie changes (an expired two_factor cookie) with the page.
    return withCookiesOf(upstream, html(c, page, upstream.status === 429 ? 429 : 400));
  }
  return redirectWith(upstream, await nextLocation(upstream, returnTo ?? "/"));
}

export const twoFactorSignInRoutes = new Hono<PageEnv>().get(TWO_FACTOR_PATH, showCodeStep).post(TWO_FACTOR_PATH, ownPagesOnly, verifyCode);

import type { Child } from "hono/jsx";
import { ErrorNote, Layout } from "../layout.js";
import { ACCOUNT_PAGES, ACCOUNT_PATH, type AccountPageInfo } from "./pages.js";
import { shownSections } from "./sections.js";

/** What every account page shows above its sections. */
export interface AccountFrame {
  email: string;
  notice: string | null;
  error: string | null;
}

/** The account area's navigation: the overview and each page, the one shown marked as current. */
function AccountNav(props: { current: string }) {
  const here = (path: string) => (path === props.current ? "page" : undefined);
  return (
    <nav class="account" aria-label="Account">
      <ul>
        <li>
          <a href={ACCOUNT_PATH} aria-current={here(ACCOUNT_PATH)}>
            Overview
          </a>
        </li>
        {ACCOUNT_PAGES.map((p) => (
          <li>
            <a href={p.path} aria-current={here(p.path)}>
              {p.title}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function Frame(props: AccountFrame & { title: string; current: string; children: Child }) {
  return (
    <Layout title={props.current === ACCOUNT_PATH ? props.title : `${props.title} · Your account`} wide>
      <AccountNav current={props.current} />
      <h1>{props.title}</h1>
      <p class="muted">Signed in as {props.email}.</p>
      {props.notice ? (
        <p class="notice" role="status">
          {props.notice}
        </p>
      ) : null}
      <ErrorNote message={props.error} />
      {props.children}
    </Layout>
  );
}

/**
 * /account: every page of the account area with its sections as links. Reads nothing but the
 * session. An old link to a section of the one-page account (`/account#agents`) lands here,
 * on that section's entry (its id), which leads on to the page that holds it.
 */
export function AccountOverview(props: AccountFrame) {
  return (
    <Frame {...props} title="Your account" current={ACCOUNT_PATH}>
      {ACCOUNT_PAGES.map((page) => (
        <section class="card" aria-labelledby={`page-${page.path.slice(ACCOUNT_PATH.length + 1)}`}>
          <h2 id={`page-${page.path.slice(ACCOUNT_PATH.length + 1)}`}>
            <a href={page.path}>{page.title}</a>
          </h2>
          <p class="muted">{page.summary}</p>
          <ul class="sections">
            {shownSections(page.sections).map(([id, label]) => (
              <li id={id}>
                <a href={`${page.path}#${id}`}>{label}</a>
              </li>
            ))}
          </ul>
        </section>
      ))}
    </Frame>
  );
}

/** One page of the account area: its sections, already read and rendered (sections.tsx). */
export function AccountPage(props: AccountFrame & { page: AccountPageInfo; sections: Child[] }) {
  return (
    <Frame {...props} title={props.page.title} current={props.page.path}>
      {props.sections}
    </Frame>
  );
}

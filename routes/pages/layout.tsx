import type { Child } from "hono/jsx";

export const STYLE = `
*{box-sizing:border-box}body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f5f5f4;color:#1c1917}
main{max-width:26rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 1px 3px #0002}
h1{font-size:1.4rem;margin:0 0 1rem}label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input[type=email],input[type=password],input[type=text]{width:100%;padding:.6rem;border:1px solid #a8a29e;border-radius:8px;font:inherit}
button{padding:.6rem 1.2rem;border:0;border-radius:8px;font:inherit;cursor:pointer;background:#1c1917;color:#fff;margin-top:1rem}
button.secondary{background:#e7e5e4;color:#1c1917}.error{background:#fee2e2;color:#7f1d1d;padding:.6rem;border-radius:8px}
.row{display:flex;gap:.75rem}fieldset{border:1px solid #d6d3d1;border-radius:8px;margin:1rem 0}label.choice{font-weight:400;display:flex;gap:.5rem;align-items:center}.muted{color:#57534e;font-size:.9rem}ul.scopes{padding-left:1.2rem}img.icon{width:48px;height:48px;border-radius:8px}
section.key-sign-in{border-top:1px solid #d6d3d1;margin-top:1.5rem}h2{font-size:1.1rem;margin:1.25rem 0 .5rem}select{width:100%;padding:.6rem;border:1px solid #a8a29e;border-radius:8px;font:inherit}
main.wide{max-width:48rem}section.card{border-top:1px solid #d6d3d1;margin-top:1.5rem}h3{font-size:1rem;margin:1rem 0 .25rem}
nav.account ul{list-style:none;padding:0;margin:0 0 1.25rem;display:flex;flex-wrap:wrap;gap:.25rem 1rem;font-size:.9rem}nav.account a[aria-current=page]{font-weight:700;color:#1c1917;text-decoration:none}ul.sections{padding-left:1.2rem;margin:.25rem 0}ul.sections li:target{font-weight:700}
table{width:100%;border-collapse:collapse;font-size:.95rem}th,td{text-align:left;padding:.45rem .3rem;border-bottom:1px solid #e7e5e4;vertical-align:top}td code{overflow-wrap:anywhere}
form.inline{display:inline-flex;gap:.4rem;align-items:center;margin:0}form.inline button,form.inline input,form.inline select{margin:0;padding:.35rem .7rem;width:auto}
.notice{background:#dcfce7;color:#14532d;padding:.6rem;border-radius:8px}.warning{background:#fef3c7;color:#78350f;padding:.6rem;border-radius:8px}.codes{font-family:ui-monospace,monospace;columns:2}svg.qr{width:12rem;height:12rem}nav.toc{font-size:.9rem}
`;

export function Layout(props: { title: string; children: Child; /** The account page's wider column. */ wide?: boolean }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{props.title}</title>
        <style>{STYLE}</style>
      </head>
      <body>
        <main class={props.wide ? "wide" : undefined}>{props.children}</main>
      </body>
    </html>
  );
}

export function ErrorNote(props: { message?: string | null }) {
  return props.message ? (
    <p class="error" role="alert">
      {props.message}
    </p>
  ) : null;
}

/**
 * A decision form (consent, device, agent approval): the `fields` that name the request, any
 * choice in `children`, and two buttons that both submit `decision` (`yes` or "deny").
 */
export function DecisionForm(props: { action: string; fields: Record<string, string>; yes: string; yesLabel: string; children?: Child }) {
  return (
    <form method="post" action={props.action}>
      {Object.entries(props.fields).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      {props.children}
      <div class="row">
        <button type="submit" name="decision" value={props.yes}>
          {props.yesLabel}
        </button>
        <button type="submit" name="decision" value="deny" class="secondary">
          Deny
        </button>
      </div>
    </form>
  );
}

/**
 * Step 1 of a code flow (device, agent approval): the person types the code their device or
 * agent shows, or confirms a prefilled one. A GET form, so the code lands in the address.
 */
export function CodeEntryForm(props: { action: string; name: string; code?: string }) {
  return (
    <form method="get" action={props.action}>
      <label for={props.name}>Code</label>
      <input id={props.name} name={props.name} type="text" autocomplete="one-time-code" autocapitalize="characters" spellcheck={false} required maxlength={16} placeholder="XXXX-XXXX" value={props.code ?? ""} />
      <button type="submit">Continue</button>
    </form>
  );
}

/** The answer page of a decision: what now happens, in one status line. Refusals are all "Request denied". */
export function DonePage(props: { approved: boolean; approvedTitle: string; approvedText: string; deniedText: string }) {
  const title = props.approved ? props.approvedTitle : "Request denied";
  return (
    <Layout title={title}>
      <h1>{title}</h1>
      <p role="status">{props.approved ? props.approvedText : props.deniedText}</p>
    </Layout>
  );
}

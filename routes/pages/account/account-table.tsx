import type { Child } from "hono/jsx";

/**
 * The account page's tables: a header row (the last, action column named quietly) and rows
 * the section writes, each ending in <PostButton> forms.
 */
export function AccountTable(props: { columns: string[]; actions?: string; children: Child }) {
  return (
    <table>
      <thead>
        <tr>
          {props.columns.map((title) => (
            <th scope="col">{title}</th>
          ))}
          {props.actions ? (
            <th scope="col">
              <span class="muted">{props.actions}</span>
            </th>
          ) : null}
        </tr>
      </thead>
      <tbody>{props.children}</tbody>
    </table>
  );
}

/**
 * One small form posting `fields` (hidden) to `action`, with one button whose accessible name
 * (`label`) says what and which when the text alone does not. Secondary unless `primary`.
 */
export function PostButton(props: { action: string; fields?: Record<string, string>; text: Child; label?: string; primary?: boolean; block?: boolean }) {
  return (
    <form method="post" action={props.action} class={props.block ? undefined : "inline"}>
      {Object.entries(props.fields ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <button type="submit" class={props.primary ? undefined : "secondary"} aria-label={props.label}>
        {props.text}
      </button>
    </form>
  );
}

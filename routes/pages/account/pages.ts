/**
 * The account area's map: a short overview at /account and a few pages, each holding some
 * sections (the `<section id>` of one card). It is the one place that says which section lives
 * on which page: the navigation, the overview's list, and every form's way back (outcome.ts)
 * read it. A section listed here is shown once sections.tsx gives it a view (one line there);
 * until then it is left out of the page and the overview. The plan page lists the billing,
 * branding, analytics and support sections ahead of their views.
 */
export const ACCOUNT_PATH = "/account";

const PAGES = [
  {
    path: `${ACCOUNT_PATH}/security`,
    title: "Profile and security",
    summary: "Your name and e-mail address, where you are signed in, and the ways you sign in.",
    sections: [
      ["profile", "Profile"],
      ["sessions", "Sessions"],
      ["accounts", "Linked accounts"],
      ["passkeys", "Passkeys"],
      ["two-factor", "Two-factor"],
    ],
  },
  {
    path: `${ACCOUNT_PATH}/identities`,
    title: "Identities, wallets and NFTs",
    summary: "Your BAP identities, the wallets connected to them and the NFTs those wallets hold.",
    sections: [
      ["identities", "BAP identities"],
      ["wallets", "Wallets"],
      ["nfts", "NFTs"],
    ],
  },
  {
    path: `${ACCOUNT_PATH}/apps`,
    title: "Apps, agents and delegations",
    summary: "The applications you let in, the agents acting through them, and the agents that act for you.",
    sections: [
      ["apps", "Apps and delegations"],
      ["agents", "Agents"],
      ["approvals", "Requests waiting for you"],
    ],
  },
  {
    path: `${ACCOUNT_PATH}/organizations`,
    title: "Organizations",
    summary: "The organizations you belong to, their members and their invitations.",
    sections: [["organizations", "Organizations"]],
  },
  {
    path: `${ACCOUNT_PATH}/plan`,
    title: "Plan, billing, branding and analytics",
    summary: "Your plan and what it gives you.",
    sections: [
      ["subscription", "Plan"],
      ["billing", "Billing"],
      ["branding", "Branding"],
      ["analytics", "Analytics"],
      ["support", "Support"],
    ],
  },
] as const satisfies ReadonlyArray<{ path: string; title: string; summary: string; sections: ReadonlyArray<readonly [string, string]> }>;

export type AccountPageInfo = (typeof PAGES)[number];
export type AccountPagePath = AccountPageInfo["path"];
export type SectionId = AccountPageInfo["sections"][number][0];

export const ACCOUNT_PAGES: readonly AccountPageInfo[] = PAGES;

const PAGE_OF_SECTION = new Map<string, AccountPageInfo>(PAGES.flatMap((page) => page.sections.map(([id]) => [id, page] as const)));

/** The page a section lives on; an unknown id (never one of ours) is the overview. */
export function pageOfSection(id: string): string {
  return PAGE_OF_SECTION.get(id)?.path ?? ACCOUNT_PATH;
}

/** Where a section is: its page, at its anchor. */
export function sectionHref(id: SectionId): string {
  return `${pageOfSection(id)}#${id}`;
}

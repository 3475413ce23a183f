/**
 * The API reference page (/api/reference): Scalar's API reference renderer, bundled into our
 * own asset (routes/pages/assets.ts), rendering /api/openapi.json. No CDN, no fonts from
 * elsewhere (withDefaultFonts: false), no proxy, no telemetry, none of Scalar's hosted services.
 */
import "@scalar/api-reference/browser/standalone.js";

interface ScalarGlobal {
  createApiReference(selector: string, configuration: Record<string, unknown>): unknown;
}

// Not #api-reference nor data-url: Scalar's standalone script mounts those by itself, with its defaults.
const mount = document.getElementById("reference");
if (mount) {
  (window as unknown as { Scalar: ScalarGlobal }).Scalar.createApiReference("#reference", {
    url: mount.dataset.document ?? "/api/openapi.json",
    withDefaultFonts: false,
    hideClientButton: true,
    telemetry: false,
    // Scalar's hosted extras (its AI agent, MCP generator, developer toolbar) call its own servers.
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: "never",
    metaData: { title: "API reference" },
  });
}

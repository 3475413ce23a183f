import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newIdentity, signRequest } from "../helpers/bap.js";
import { useTestServer } from "../helpers/fixtures.js";
import { ResponseValidator, type Answer } from "../helpers/openapi-validator.js";

/**
 * The OpenAPI document used the way an integrator uses it: types generated from the served
 * document with openapi-typescript, a small client program on openapi-fetch type-checked
 * against them with the TypeScript compiler (a wrong path, method, body or answer member is a
 * compile error), then run against the server. Every answer it gets is checked against the
 * document too (tests/helpers/openapi-validator.ts).
 */

const ROOT = join(import.meta.dirname, "..", "..");

/**
 * The client program. It signs up, registers a BAP identity, signs in with its key, and
 * works the backup, profile, wallet, subscription, certificate and domain routes; `sign`
 * makes the Bitcoin-Auth token (the test holds the key).
 */
const PROGRAM = `
import createClient from "openapi-fetch";
import type { paths } from "./schema.js";

export interface Signer {
  bapId: string;
  sign(path: string, body: string): string;
}

export async function run(baseUrl: string, fetchImpl: typeof fetch, signer: Signer, email: string) {
  const client = createClient<paths>({ baseUrl, fetch: fetchImpl, headers: { origin: baseUrl } });

  const signUp = await client.POST("/api/auth/sign-up/email", { body: { email, password: "correct horse battery staple", name: "Client Program" } });
  if (!signUp.data) throw new Error("sign-up: " + signUp.response.status);
  const cookie = signUp.response.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const userId: string = signUp.data.user.id;
  const headers = { cookie };

  const session = await client.GET("/api/auth/get-session", { headers });
  const sessionEmail: string | undefined = session.data?.user.email;

  const registerBody = JSON.stringify({ bapId: signer.bapId });
  const registered = await client.POST("/api/user/bap-ids", {
    headers: { ...headers, "x-auth-token": signer.sign("/api/user/bap-ids", registerBody), "content-type": "application/json" },
    body: { bapId: signer.bapId },
    bodySerializer: () => registerBody,
  });
  const identityKey: string | undefined = registered.data?.bapId.identity_key;

  const signInBody = JSON.stringify({ bapId: signer.bapId });
  const keySignIn = await client.POST("/api/auth/sign-in/sigma", {
    params: { header: { "x-auth-token": signer.sign("/api/auth/sign-in/sigma", signInBody) } },
    body: { bapId: signer.bapId },
    bodySerializer: () => signInBody,
  });
  const keySessionToken: string | undefined = keySignIn.data?.token;
  const keySignInName: string | undefined = keySignIn.data?.user.name;

  const identities = await client.GET("/api/user/bap-ids", { headers });
  const identityCount: number = identities.data?.bapIds.length ?? -1;

  const stored = await client.POST("/api/backup", { headers, body: { encryptedBackup: "U2FsdGVkX1+c2lwaGVydGV4dC1vbmx5LW5vdC1hLWtleQ==" } });
  const generation: number | undefined = stored.data?.generation;
  const status = await client.GET("/api/backup/status", { headers });
  const hasBackup: boolean | undefined = status.data?.hasBackup;
  const backup = await client.GET("/api/backup", { headers, params: { query: { bapId: signer.bapId } } });
  const ciphertext: string | undefined = backup.data?.backup;

  const draft = await client.POST("/api/bap/profile", { headers, body: { bapId: signer.bapId, profile: { "@context": "https://schema.org", "@type": "Person", alternateName: "client" } } });
  const draftSaved: boolean | undefined = draft.data?.result.draft;
  const profile = await client.GET("/api/bap/profile", { headers, params: { query: { bapId: signer.bapId } } });
  const profileKey: string | undefined = profile.data?.result.identity_key;

  const wallets = await client.GET("/api/wallet/connect", { headers, params: { query: { bapId: signer.bapId } } });
  const walletCount: number = wallets.data?.wallets.length ?? -1;
  const address = await client.GET("/api/wallet/address", { headers, params: { query: { bapId: signer.bapId } } });
  const primaryAddress: string | null | undefined = address.data?.primaryAddress;

  const subscription = await client.GET("/api/subscription/status", { headers });
  const tier: "free" | "plus" | "pro" | undefined = subscription.data?.tier;

  const types = await client.GET("/api/certificates/types");
  const typeKeys: string[] = (types.data?.types ?? []).map((t) => t.key);
  const eligibility = await client.GET("/api/certificates/eligibility", { headers, params: { query: { bapId: signer.bapId } } });
  const eligibleTypes: number = eligibility.data?.types.length ?? -1;

  const started = await client.POST("/api/domain-verifications", { headers, body: { bapId: signer.bapId, domain: "client-program.example.com", method: "dns" } });
  const challengeName: string | undefined = started.data?.challenge.name;
  const verifications = await client.GET("/api/domain-verifications", { headers, params: { query: { bapId: signer.bapId } } });
  const verificationStatuses: string[] = (verifications.data?.verifications ?? []).map((v) => v.status);

  const apps = await client.GET("/api/authorized-apps", { headers });
  const appCount: number = apps.data?.apps.length ?? -1;

  const discovery = await client.GET("/.well-known/openid-configuration");
  const issuer: string | undefined = discovery.data?.issuer;

  const unauthenticated = await client.GET("/api/subscription/status");
  const problemStatus: number | undefined = unauthenticated.error?.status;

  return {
    userId, sessionEmail, identityKey, keySessionToken, keySignInName, identityCount, generation, hasBackup, ciphertext, draftSaved, profileKey,
    walletCount, primaryAddress, tier, typeKeys, eligibleTypes, challengeName, verificationStatuses, appCount, issuer, problemStatus,
    registeredStatus: registered.response.status, startedStatus: started.response.status,
  };
}
`;

describe("a client generated from the OpenAPI document (openapi-typescript + openapi-fetch)", () => {
  const server = useTestServer();
  let dir: string;
  let document: Record<string, unknown>;

  beforeAll(async () => {
    // Inside node_modules (ignored by git), so the program resolves openapi-fetch as an installed package.
    dir = mkdtempSync(join(ROOT, "node_modules", ".openapi-client-"));
    document = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as Record<string, unknown>;
  }, 30_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("generates types, type-checks the client program, and its calls get the documented answers", async () => {
    const ast = await openapiTS(document as never);
    writeFileSync(join(dir, "schema.ts"), astToString(ast));
    writeFileSync(join(dir, "client.ts"), PROGRAM);
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));

    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      skipLibCheck: true,
      types: ["node"],
      typeRoots: [join(ROOT, "node_modules", "@types")],
      outDir: join(dir, "out"),
    };
    const program = ts.createProgram([join(dir, "client.ts")], options);
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n") + (d.file ? ` (${d.file.fileName.split("/").pop()}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1})` : ""));
    expect(diagnostics).toEqual([]);
    expect(program.emit().emitSkipped).toBe(false);

    // The compiled program, run against the server; every answer recorded for the validator.
    const answers: Answer[] = [];
    const recording: typeof fetch = async (input, init) => {
      const request = new Request(input as RequestInfo, init);
      const res = await fetch(request);
      const body = await res.clone().text();
      answers.push({ method: request.method, url: new URL(request.url).pathname, status: res.status, contentType: res.headers.get("content-type"), body });
      return res;
    };
    const id = newIdentity();
    const signer = { bapId: id.bapId, sign: (path: string, body: string) => signRequest(id.key, path, body) };
    const { run } = (await import(pathToFileURL(join(dir, "out", "client.js")).href)) as { run: (...args: unknown[]) => Promise<Record<string, unknown>> };
    const result = await run(server.url, recording, signer, `client-${Date.now()}@example.com`);

    expect(result).toMatchObject({
      sessionEmail: expect.stringMatching(/^client-\d+@example\.com$/),
      registeredStatus: 201,
      identityKey: id.bapId,
      keySessionToken: expect.any(String),
      keySignInName: "Client Program",
      identityCount: 1,
      generation: 1,
      hasBackup: true,
      ciphertext: "U2FsdGVkX1+c2lwaGVydGV4dC1vbmx5LW5vdC1hLWtleQ==",
      draftSaved: true,
      profileKey: id.bapId,
      walletCount: 0,
      primaryAddress: null,
      tier: "free",
      eligibleTypes: expect.any(Number),
      startedStatus: 201,
      challengeName: expect.stringContaining("client-program.example.com"),
      verificationStatuses: ["pending"],
      appCount: 0,
      issuer: expect.stringContaining(server.url),
      problemStatus: 401,
    });
    expect(result.typeKeys).toEqual(expect.arrayContaining(["emailCert", "verifiedDomain", "bapWalletBinding"]));
    expect(answers.length).toBeGreaterThanOrEqual(20);
    expect(new ResponseValidator(document as never).findings(answers)).toEqual([]);
  }, 120_000);

  it("fails to compile a call the document does not allow", async () => {
    const ast = await openapiTS(document as never);
    writeFileSync(join(dir, "schema.ts"), astToString(ast));
    writeFileSync(
      join(dir, "wrong.ts"),
      `import createClient from "openapi-fetch";
import type { paths } from "./schema.js";
const client = createClient<paths>({ baseUrl: "http://x" });
export async function wrong() {
  await client.GET("/api/no-such-route");
  await client.POST("/api/domain-verifications", { body: { bapId: "x", domain: "d", method: "ftp" } });
  const status = await client.GET("/api/subscription/status");
  return status.data?.noSuchMember;
}
`,
    );
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
    const program = ts.createProgram([join(dir, "wrong.ts")], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      skipLibCheck: true,
      noEmit: true,
      types: [],
    });
    const diagnostics = ts.getPreEmitDiagnostics(program);
    // One error on each wrong line: the unknown path (line 5), the method outside the enum (6), the member the answer lacks (8).
    const lines = diagnostics.map((d) => (d.file ? d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1 : 0));
    expect(lines).toEqual([5, 6, 8]);
    const messages = diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, " ")).join("\n");
    expect(messages).toMatch(/"ftp"/);
    expect(messages).toMatch(/noSuchMember/);
  }, 60_000);
});

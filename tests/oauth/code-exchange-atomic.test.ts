import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { authorize, pkce, REDIRECT, registerClient, signUp, token } from "../helpers/oauth.js";

const server = useTestServer();

/** Rows of each token table held by `clientId`. */
async function storedTokens(clientId: string) {
  const count = async (table: "oauthRefreshToken" | "oauthAccessToken") =>
    Number((await server.db.selectFrom(table).select((eb) => eb.fn.countAll().as("n")).where("clientId", "=", clientId).executeTakeFirstOrThrow()).n);
  return { refresh: await count("oauthRefreshToken"), access: await count("oauthAccessToken") };
}

/** A signed-in person's code for a new public client, and its verifier. */
async function codeForNewClient() {
  const person = await signUp(server);
  const client = await registerClient(server);
  const { verifier, challenge } = pkce();
  const auth = await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge });
  const form = { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier };
  return { clientId: client.client_id, form };
}

// lib/atomic-refresh.ts: on PostgreSQL the code exchange's inserts are one transaction.
describe.runIf(Boolean(process.env.TEST_DATABASE_URL))("the authorization-code grant on PostgreSQL: one transaction", () => {
  it("stores the refresh and the access token together", async () => {
    const { clientId, form } = await codeForNewClient();
    const res = await token(server, form);
    expect(res.status).toBe(200);
    expect(await storedTokens(clientId)).toEqual({ refresh: 1, access: 1 });
  });

  it("keeps neither when the access token's insert fails after the refresh token's: a 503, nothing half-written", async () => {
    const { clientId, form } = await codeForNewClient();
    // The access-token insert fails for this client only (other test files share the database),
    // as a database going away between the two inserts would make it fail.
    const name = `idp_test_fail_${randomBytes(6).toString("hex")}`;
    await sql
      .raw(
        `create function "${name}"() returns trigger language plpgsql as $$ begin if new."clientId" = '${clientId}' then raise exception 'injected' using errcode = 'admin_shutdown'; end if; return new; end $$;
         create trigger "${name}" before insert on "oauthAccessToken" for each row execute function "${name}"()`,
      )
      .execute(server.db);
    let res;
    try {
      res = await token(server, form);
    } finally {
      await sql.raw(`drop trigger "${name}" on "oauthAccessToken"; drop function "${name}"()`).execute(server.db);
    }
    expect(res.status).toBe(503);
    expect(res.json).toMatchObject({ error: "temporarily_unavailable" });
    // The refresh token was inserted first (oauth-provider's order); the failure rolled it back.
    expect(await storedTokens(clientId)).toEqual({ refresh: 0, access: 0 });
  });
});

// Bearer tokens: a gateway configured with [[rpc.auth.tokens]] and [[console.auth.tokens]].

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { MetaAuthError, MetaClient, MetaError } from "../src/index.js";
import { removeTemps, sha256, startHttpGateway, tempDir, writeConfig, type HttpGateway } from "../testing/gateway.js";

const APP_TOKEN = "app-token-4f9a1c";
const CONSOLE_TOKEN = "console-token-77e0b2";

describe("token auth over HTTP", () => {
  let gateway: HttpGateway;

  before(async () => {
    const dir = await tempDir();
    const config = await writeConfig(
      dir,
      [
        "[memory]",
        'kind = "local_json"',
        "",
        "[agent_memory]",
        "",
        "[[rpc.auth.tokens]]",
        `token_sha256 = "${sha256(APP_TOKEN)}"`,
        'subject = "app"',
        "",
        "[[console.auth.tokens]]",
        `token_sha256 = "${sha256(CONSOLE_TOKEN)}"`,
        'subject = "ops"',
        "",
      ].join("\n"),
    );
    gateway = await startHttpGateway({ config });
  });

  after(async () => {
    await gateway?.stop();
    await removeTemps();
  });

  it("sends the token and works with it", async () => {
    const client = await MetaClient.connect({ url: gateway.url, token: APP_TOKEN });
    const record = await client.rememberAgentMemory({
      identity: "svc:auth",
      title: "Token",
      body: "It works with the token.",
    });
    const { records } = await client.recallAgentMemory({ identity: "svc:auth", selection: "always" });
    assert.deepEqual(
      records.map((r) => r.memoryId),
      [record.memoryId],
    );
  });

  it("refuses a missing token with MetaAuthError (401)", async () => {
    const client = await MetaClient.connect({ url: gateway.url });
    const err = await client.status().then(
      () => assert.fail("expected a MetaAuthError"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof MetaAuthError, String(err));
    assert.ok(err instanceof MetaError);
    assert.equal(err.status, 401);
    assert.equal(err.code, -32030);
    assert.match(err.message, /none was sent/);
    assert.deepEqual(err.data, { kind: "unauthenticated", reason: "missing_token" });
  });

  it("refuses a wrong token with MetaAuthError (401)", async () => {
    const client = await MetaClient.connect({ url: gateway.url, token: "not-the-token" });
    await assert.rejects(
      client.rememberAgentMemory({ identity: "svc:auth", title: "t", body: "b" }),
      (e: unknown) => e instanceof MetaAuthError && e.status === 401 && /refused the bearer token/.test(e.message),
    );
    // The application token is not a console token, and the other way round.
    const swapped = await MetaClient.connect({ url: gateway.url, token: CONSOLE_TOKEN, consoleToken: APP_TOKEN });
    await assert.rejects(swapped.status(), MetaAuthError);
    await assert.rejects(swapped.console.capabilities(), MetaAuthError);
  });

  it("reaches the console surface with the console token", async () => {
    const client = await MetaClient.connect({ url: gateway.url, token: APP_TOKEN, consoleToken: CONSOLE_TOKEN });
    const capabilities = await client.console.capabilities();
    assert.ok(capabilities.methods.includes("meta/memory/quarantine/decide"));
    assert.ok(!capabilities.methods.includes("meta/session/open"), "sessions are not a console method");
    const appCapabilities = await client.capabilities();
    assert.ok(appCapabilities.methods.includes("meta/session/open"));
    const raw = await client.console.call<{ records: unknown[] }>("meta/memory/panel/records", { limit: 5 });
    assert.ok(Array.isArray(raw.records));
  });
});

// Team-memory lifecycle over the wire: a session closed with a retirement cause queues an exit
// interview (with the steward on), and the console resolves the steward's usage-audit verdicts.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { MetaClient, MetaError } from "../src/index.js";
import { removeTemps, startHttpGateway, tempDir, writeConfig, type HttpGateway } from "../testing/gateway.js";

describe("session retirement and audit verdicts", () => {
  let gateway: HttpGateway;
  let client: MetaClient;

  before(async () => {
    const dir = await tempDir();
    // The steward on, with a day-long cadence: nothing dreams on its own during the test.
    const config = await writeConfig(
      dir,
      ["[memory]", 'kind = "local_json"', "", "[agent_memory]", "", "[agent_memory.steward]", 'cadence = "*/1d"', ""].join(
        "\n",
      ),
    );
    gateway = await startHttpGateway({ config });
    client = await MetaClient.connect({ url: gateway.url });
  });

  after(async () => {
    await client?.close();
    await gateway?.stop();
    await removeTemps();
  });

  it("queues an exit interview when a session closes with a retirement cause", async () => {
    const session = await client.openSession({ identity: "scout:1" });
    assert.deepEqual(await session.close({ cause: "retired" }), { closed: true, harvest: "queued" });

    const { harvests } = await client.console.call<{ harvests: Record<string, unknown>[] }>(
      "meta/memory/panel/harvests",
      {},
    );
    assert.deepEqual(
      harvests.map((h) => [h.identity, h.session_key, h.cause]),
      [["scout:1", session.key, "retired"]],
    );
    const plain = await client.openSession({ identity: "scout:2" });
    assert.deepEqual(await plain.close(), { closed: true, harvest: null });
  });

  it("refuses a cause that is not a retirement cause, naming it", async () => {
    const session = await client.openSession({ identity: "scout:3" });
    await assert.rejects(
      session.close({ cause: "fired" as never }),
      (e: unknown) => e instanceof MetaError && e.code === -32602 && /^cause must be/.test(e.message),
    );
    assert.deepEqual(await session.close(), { closed: true, harvest: null });
  });

  it("resolves audit verdicts on the console, its params sent in snake_case", async () => {
    const { memoryId } = await client.rememberAgentMemory({ identity: "lead:main", title: "VPN", body: "Use the VPN." });
    await assert.rejects(
      client.console.resolveAuditVerdict({ runId: "dream-none", recordId: memoryId, action: "acknowledge" }),
      (e: unknown) =>
        e instanceof MetaError &&
        e.code === -32602 &&
        (e.data as { kind?: string; reason?: string }).kind === "audit_verdict_refused" &&
        (e.data as { reason?: string }).reason === "unknown_verdict",
    );
    await assert.rejects(
      client.console.resolveAuditVerdict({ runId: "dream-none", recordId: memoryId, action: "tombstone" }),
      (e: unknown) => e instanceof MetaError && e.code === -32602 && /expected_content_hash/.test(e.message),
    );
  });
});

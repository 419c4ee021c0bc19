// MetaClient.spawn: a real `meta_gateway stdio` child speaking JSON lines.

import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, it } from "node:test";

import { MetaClient, MetaConnectionError, MetaError, MetaTimeoutError } from "../src/index.js";
import { alive, GATEWAY, removeTemps, tempDir, writeConfig } from "../testing/gateway.js";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function waitUntilGone(pid: number, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!alive(pid)) return true;
    await sleep(50);
  }
  return !alive(pid);
}

describe("MetaClient.spawn over stdio", () => {
  after(async () => {
    await removeTemps();
  });

  it("does the remember → recall round trip and closes the child cleanly", async () => {
    const stateDir = join(await tempDir(), "state");
    // A long grace period: close() must end the child by closing its stdin, not by a signal.
    const client = await MetaClient.spawn({ stateDir, command: GATEWAY, closeGraceMs: 30_000 });
    assert.match(client.contractVersion ?? "", /^\d+\.\d+\.\d+$/);
    const pid = client.pid;
    assert.equal(typeof pid, "number");

    const record = await client.rememberAgentMemory({
      identity: "lead:stdio",
      title: "Stdio",
      body: "JSON lines over the child's stdin and stdout.",
      tags: ["Transport"],
    });
    assert.match(record.memoryId, /^mem-/);
    assert.deepEqual(record.tags, ["transport"]);
    // Requests in flight together are matched to their replies by id.
    const [recalled, status, stores] = await Promise.all([
      client.recallAgentMemory({ identity: "lead:stdio", queryText: "json lines stdin" }),
      client.status(),
      client.memoryStores(),
    ]);
    assert.deepEqual(recalled.records, [{ ...record, score: 1 }]);
    assert.equal(status.stateDir, stateDir);
    assert.equal(stores.stores.length, 5);
    await assert.rejects(
      client.recallAgentMemory({ identity: "lead:stdio", selection: "sometimes" as never }),
      (e: unknown) => e instanceof MetaError && e.code === -32602 && /selection/.test(e.message),
    );

    const session = await client.openSession({ identity: "lead:stdio" });
    const context = await session.buildContext();
    assert.match(context.text ?? "", /JSON lines/);
    await session.close();

    const closing = Date.now();
    await client.close();
    assert.ok(Date.now() - closing < 10_000, "the child exited on EOF, within the grace period");
    assert.ok(await waitUntilGone(pid as number), "the child exited after close()");
    await assert.rejects(client.status(), (e: unknown) => e instanceof MetaConnectionError && /closed/.test(e.message));
    await client.close(); // twice is fine

    // The state persisted: a new child on the same state dir recalls it.
    const again = await MetaClient.spawn({ stateDir, command: GATEWAY });
    const { records } = await again.recallAgentMemory({ identity: "lead:stdio", selection: "always" });
    assert.deepEqual(
      records.map((r) => r.memoryId),
      [record.memoryId],
    );
    await again.close();
  });

  it("matches an id-less reply (to an oversized line) to its own request", async () => {
    const client = await MetaClient.spawn({ stateDir: join(await tempDir(), "state"), command: GATEWAY });
    try {
      const [big, small] = await Promise.allSettled([
        client.rememberAgentMemory({ identity: "a", title: "t", body: "x".repeat(5 * 1024 * 1024) }),
        client.status(),
      ]);
      assert.equal(big.status, "rejected");
      const err = (big as PromiseRejectedResult).reason as unknown;
      assert.ok(err instanceof MetaError && err.code === -32600, String(err));
      assert.equal(small.status, "fulfilled");
    } finally {
      await client.close();
    }
  });

  it("uses a config file, and rejects with the gateway's MetaError when it refuses to boot", async () => {
    const dir = await tempDir();
    const good = await writeConfig(dir, '[memory]\nkind = "local_json"\n\n[agent_memory]\nmax_entries = 2\n');
    const client = await MetaClient.spawn({ stateDir: join(dir, "state"), config: good, command: GATEWAY });
    for (const n of [1, 2, 3]) {
      await client.rememberAgentMemory({ identity: "cfg:id", title: `Note ${n}`, body: `Body number ${n}.` });
    }
    const { records } = await client.recallAgentMemory({ identity: "cfg:id", selection: "always" });
    assert.equal(records.length, 2, "max_entries = 2 from the config");
    await client.close();

    const badDir = await tempDir();
    const bad = await writeConfig(badDir, '[agent_memory]\nstore = "markdown"\n');
    const err = await MetaClient.spawn({ stateDir: join(badDir, "state"), config: bad, command: GATEWAY }).then(
      () => assert.fail("expected the boot to be refused"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof MetaError, String(err));
    assert.equal(err.code, -32014);
    assert.match(err.message, /markdown/);
  });

  it("reports a child that exited as MetaConnectionError, with its stderr", async () => {
    const client = await MetaClient.spawn({ stateDir: join(await tempDir(), "state"), command: GATEWAY });
    process.kill(client.pid as number, "SIGKILL");
    const err = await client.status().then(
      () => assert.fail("expected a connection error"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof MetaConnectionError, String(err));
    assert.match(err.message, /SIGKILL|exited|closed/);
    await client.close();
  });

  it("reports a command that does not exist as MetaConnectionError", async () => {
    await assert.rejects(
      MetaClient.spawn({ stateDir: join(await tempDir(), "state"), command: "/nonexistent/meta_gateway" }),
      (e: unknown) => e instanceof MetaConnectionError && /ENOENT/.test(e.message),
    );
  });

  it("times out a request the child does not answer, then kills the child on close", async () => {
    // A child that says the handshake, then reads nothing and answers nothing.
    const client = await MetaClient.spawn({
      stateDir: "unused",
      command: "sh",
      args: ["-c", `echo '{"contract_version":"0.0.0"}'; exec sleep 30`],
      timeoutMs: 200,
      closeGraceMs: 200,
    });
    assert.equal(client.contractVersion, "0.0.0");
    const started = Date.now();
    await assert.rejects(client.status(), (e: unknown) => e instanceof MetaTimeoutError && e.method === "meta/status");
    assert.ok(Date.now() - started < 2_000);
    const pid = client.pid as number;
    await client.close(); // stdin closed, no exit within the grace period: SIGTERM
    assert.ok(await waitUntilGone(pid, 3_000));
  });

  it("times out a child that never says its handshake", async () => {
    await assert.rejects(
      MetaClient.spawn({
        stateDir: "unused",
        command: "sh",
        args: ["-c", "exec sleep 30"],
        startTimeoutMs: 200,
        closeGraceMs: 100,
      }),
      (e: unknown) => e instanceof MetaTimeoutError,
    );
  });
});

// meta/agent_memory/list, get, history and purge, and recall's tags filter, against a real gateway.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { ErrorCode, MetaClient, MetaError, MetaHandle } from "../src/index.js";
import { removeTemps, startHttpGateway, type HttpGateway } from "../testing/gateway.js";

describe("listing and getting agent memory", () => {
  let gateway: HttpGateway;
  let client: MetaClient;

  before(async () => {
    gateway = await startHttpGateway();
    client = await MetaClient.connect({ url: gateway.url });
  });

  after(async () => {
    await client?.close();
    await gateway?.stop();
    await removeTemps();
  });

  it("lists records page by page, with filters, in camelCase", async () => {
    const identity = "lead:list";
    const made = [];
    for (const [n, tags] of [
      [1, ["ops"]],
      [2, ["ops", "deploy"]],
      [3, ["billing"]],
    ] as const) {
      made.push(
        await client.rememberAgentMemory({ identity, title: `Note ${n}`, body: `Body of note ${n}.`, tags: [...tags] }),
      );
    }
    const ids: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const result = await client.listAgentMemory(
        cursor === undefined ? { identity, limit: 2 } : { identity, limit: 2, cursor },
      );
      assert.ok(result.records.length <= 2);
      assert.equal(result.realm, "default");
      ids.push(...result.records.map((r) => r.memoryId));
      if (result.nextCursor === null) break;
      cursor = result.nextCursor;
    }
    assert.deepEqual([...ids].sort(), made.map((r) => r.memoryId).sort());

    const { records } = await client.listAgentMemory({ identity, tagsAny: ["deploy", "billing"] });
    assert.deepEqual(records.map((r) => r.title).sort(), ["Note 2", "Note 3"]);
    const [first] = records;
    assert.equal(first?.status, "active");
    assert.equal(typeof first?.createdAtMs, "number");
    assert.equal(typeof first?.author.author, "string");
    assert.ok(!("created_at_ms" in (first ?? {})));

    const both = await client.listAgentMemory({ identity, tagsAll: ["ops", "deploy"] });
    assert.deepEqual(
      both.records.map((r) => r.title),
      ["Note 2"],
    );
    const none = await client.listAgentMemory({ identity, createdAfterMs: Date.now() + 60_000 });
    assert.deepEqual(none.records, []);
  });

  it("gets one record and follows its successor", async () => {
    const identity = "lead:get";
    const first = await client.rememberAgentMemory({ identity, title: "Office", body: "The office is on floor 3." });
    const got = await client.getAgentMemory({ identity, memoryId: first.memoryId });
    assert.equal(got.record.memoryId, first.memoryId);
    assert.equal(got.record.body, "The office is on floor 3.");
    assert.equal(got.successor, null);

    const updated = await client.updateAgentMemory({
      identity,
      memoryId: first.memoryId,
      title: "Office",
      body: "The office moved to floor 5.",
    });
    const old = await client.getAgentMemory({ identity, memoryId: first.memoryId });
    assert.equal(old.record.status, "superseded");
    assert.equal(old.successor, updated.memoryId);

    await client.forgetAgentMemory({ identity, memoryId: updated.memoryId });
    const history = await client.agentMemoryHistory({ identity, memoryId: updated.memoryId });
    assert.equal(history.memoryId, updated.memoryId);
    assert.deepEqual(
      history.versions.map((v) => [v.memoryId, v.status, v.ended, v.body, v.contentWithheld]),
      [
        [first.memoryId, "superseded", "superseded", "The office is on floor 3.", false],
        [updated.memoryId, "tombstoned", "forgotten", "The office moved to floor 5.", false],
      ],
    );

    const superseded = await client.listAgentMemory({ identity, status: "superseded" });
    assert.deepEqual(
      superseded.records.map((r) => r.memoryId),
      [first.memoryId],
    );

    await assert.rejects(
      client.getAgentMemory({ identity, memoryId: "mem-does-not-exist" }),
      (e: unknown) => e instanceof MetaError && e.code === ErrorCode.UnknownRecord,
    );
  });

  it("writes a record that expires, and keeps or clears its expiry on update", async () => {
    const identity = "lead:expiry";
    const before = Date.now();
    const made = await client.rememberAgentMemory({ identity, title: "Plan", body: "Today's plan.", ttlMs: 3_600_000 });
    assert.ok(made.expiresAtMs !== undefined && made.expiresAtMs !== null);
    assert.ok(made.expiresAtMs >= before + 3_600_000 && made.expiresAtMs <= Date.now() + 3_600_000);
    const kept = await client.updateAgentMemory({ identity, memoryId: made.memoryId, title: "Plan", body: "Revised plan." });
    assert.equal((await client.getAgentMemory({ identity, memoryId: kept.memoryId })).record.expiresAtMs, made.expiresAtMs);
    const cleared = await client.updateAgentMemory({
      identity,
      memoryId: kept.memoryId,
      title: "Plan",
      body: "The plan for good.",
      expiresAtMs: null,
    });
    const got = await client.getAgentMemory({ identity, memoryId: cleared.memoryId });
    assert.equal(got.record.expiresAtMs, null);
    assert.equal(got.record.status, "active");
    await assert.rejects(
      client.rememberAgentMemory({ identity, title: "Late", body: "Already over.", expiresAtMs: 1 }),
      (err: MetaError) => err.code === -32602 && /expires_at_ms must be in the future/.test(err.message),
    );
  });

  it("scores contextual recall and cuts it at minScore", async () => {
    const identity = "lead:scores";
    const both = await client.rememberAgentMemory({ identity, title: "Grinder", body: "The espresso grinder is on 12." });
    const one = await client.rememberAgentMemory({ identity, title: "Beans", body: "Espresso beans come on Fridays." });
    const { records } = await client.recallAgentMemory({ identity, queryText: "espresso grinder" });
    assert.deepEqual(
      records.map((r) => r.memoryId),
      [both.memoryId, one.memoryId],
    );
    assert.equal(records[0].score, 1);
    const second = records[1].score ?? 1;
    assert.ok(second > 0 && second < 1, String(second));
    const cut = await client.recallAgentMemory({ identity, queryText: "espresso grinder", minScore: 0.999 });
    assert.deepEqual(
      cut.records.map((r) => r.memoryId),
      [both.memoryId],
    );
    const newest = await client.recallAgentMemory({ identity, selection: "always" });
    assert.ok(newest.records.every((r) => r.score === null));
  });

  it("filters recall by tags", async () => {
    const identity = "lead:tags";
    await client.rememberAgentMemory({ identity, title: "Red", body: "Red things.", tags: ["red"] });
    const blue = await client.rememberAgentMemory({ identity, title: "Blue", body: "Blue things.", tags: ["blue"] });
    const { records } = await client.recallAgentMemory({ identity, selection: "always", tags: ["blue"] });
    assert.deepEqual(
      records.map((r) => r.memoryId),
      [blue.memoryId],
    );
  });
});

// A purge rewrites the realm's files: it runs on a gateway of its own.
describe("purging agent memory", () => {
  let gateway: HttpGateway;
  let client: MetaClient;

  before(async () => {
    gateway = await startHttpGateway();
    client = await MetaClient.connect({ url: gateway.url });
  });

  after(async () => {
    await client?.close();
    await gateway?.stop();
    await removeTemps();
  });

  it("purges a record's whole lineage, then everything of the identity, with a receipt", async () => {
    const identity = "lead:purge";
    const first = await client.rememberAgentMemory({ identity, title: "Office", body: "The office is on floor 3." });
    const other = await client.rememberAgentMemory({ identity, title: "Parking", body: "Park on level -2." });
    const updated = await client.updateAgentMemory({
      identity,
      memoryId: first.memoryId,
      title: "Office",
      body: "The office moved to floor 5.",
    });
    const hashes = new Map<string, string | undefined>();
    for (const memoryId of [first.memoryId, updated.memoryId]) {
      hashes.set(memoryId, (await client.getAgentMemory({ identity, memoryId })).record.contentHash);
    }

    const receipt = await client.purgeAgentMemory({ identity, memoryId: updated.memoryId });
    assert.equal(typeof receipt.receiptId, "string");
    assert.deepEqual(
      [receipt.realm, receipt.identity, receipt.memoryIds, receipt.by.kind],
      ["default", identity, [updated.memoryId], "application"],
    );
    assert.equal(typeof receipt.purgedAtMs, "number");
    assert.deepEqual(
      receipt.records.map((r) => r.memoryId).sort(),
      [first.memoryId, updated.memoryId].sort(),
    );
    for (const record of receipt.records) {
      assert.match(record.contentHash, /^[0-9a-f]{64}$/);
      assert.equal(record.contentHash, hashes.get(record.memoryId));
      assert.deepEqual(record.scope, { kind: "identity", key: identity });
    }
    assert.deepEqual(
      receipt.records.map((r) => [r.memoryId, r.status]).sort(),
      [
        [first.memoryId, "superseded"],
        [updated.memoryId, "active"],
      ].sort(),
    );
    // The removed counts come back camelCased, as every other key.
    assert.equal(typeof receipt.removed.auditRows, "number");
    assert.ok(!("audit_rows" in receipt.removed));
    assert.ok(!("content_hash" in (receipt.records[0] ?? {})));

    for (const memoryId of [first.memoryId, updated.memoryId]) {
      await assert.rejects(
        client.getAgentMemory({ identity, memoryId }),
        (e: unknown) => e instanceof MetaError && e.code === ErrorCode.UnknownRecord,
      );
    }
    assert.equal((await client.getAgentMemory({ identity, memoryId: other.memoryId })).record.status, "active");

    // Through the handle: everything left of the identity.
    const everything = await new MetaHandle(client).purgeAgentMemory(identity, { all: true });
    assert.equal(everything.memoryIds, null);
    assert.deepEqual(
      everything.records.map((r) => r.memoryId),
      [other.memoryId],
    );
    assert.deepEqual((await client.listAgentMemory({ identity, status: "any" })).records, []);

    // A purge names its target: neither memoryId nor all, or both, is refused.
    for (const params of [{ identity }, { identity, memoryId: other.memoryId, all: true }]) {
      await assert.rejects(
        client.purgeAgentMemory(params),
        (e: unknown) => e instanceof MetaError && e.code === ErrorCode.InvalidParams,
      );
    }
  });
});

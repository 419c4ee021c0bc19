// The client against a real `meta_gateway serve` (built-in default config: agent memory on).

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { ErrorCode, MetaClient, MetaError } from "../src/index.js";
import { removeTemps, startHttpGateway, type HttpGateway } from "../testing/gateway.js";

describe("MetaClient over HTTP", () => {
  let gateway: HttpGateway;
  let client: MetaClient;

  before(async () => {
    gateway = await startHttpGateway();
    client = await MetaClient.connect({ url: gateway.url, timeoutMs: 20_000 });
  });

  after(async () => {
    await client?.close();
    await gateway?.stop();
    await removeTemps();
  });

  it("remembers and recalls, with camelCase results", async () => {
    const record = await client.rememberAgentMemory({
      identity: "lead:main",
      title: "Deploy policy",
      body: "Production deploys need an approval from ops.",
      tags: ["Deploys", "ops"],
    });
    assert.match(record.memoryId, /^mem-/);
    assert.deepEqual(Object.keys(record).sort(), [
      "body",
      "createdAtMs",
      "memoryId",
      "scopeKey",
      "scopeKind",
      "tags",
      "title",
      "updatedAtMs",
    ]);
    assert.deepEqual([record.scopeKind, record.scopeKey], ["identity", "lead:main"]);
    assert.equal(record.title, "Deploy policy");
    assert.deepEqual(record.tags, ["deploys", "ops"]);
    assert.equal(typeof record.createdAtMs, "number");

    const { records } = await client.recallAgentMemory({
      identity: "lead:main",
      queryText: "who approves a production deploy?",
      maxEntries: 4,
    });
    assert.equal(records.length, 1);
    assert.deepEqual(records[0], { ...record, score: 1 }); // the record remember gave, and its score

    const always = await client.recallAgentMemory({ identity: "lead:main", selection: "always" });
    assert.deepEqual(
      always.records.map((r) => r.memoryId),
      [record.memoryId],
    );
  });

  it("writes a shared scope that every identity reads, each record naming its scope", async () => {
    const shared = await client.rememberAgentMemory({
      scope: { kind: "realm" },
      title: "Office",
      body: "The office moved to Lyon in March.",
    });
    assert.deepEqual([shared.scopeKind, shared.scopeKey], ["realm", ""]);
    const found = await client.recallAgentMemory({ identity: "scout:ts", queryText: "where is the office?" });
    assert.deepEqual(
      found.records.map((r) => [r.memoryId, r.scopeKind]),
      [[shared.memoryId, "realm"]],
    );
    const own = await client.recallAgentMemory({ identity: "scout:ts", queryText: "office", scopes: ["identity"] });
    assert.deepEqual(own.records, []);
    assert.deepEqual(await client.forgetAgentMemory({ scope: { kind: "realm" }, memoryId: shared.memoryId }), {
      memoryId: shared.memoryId,
      deleted: true,
    });
  });

  it("updates and forgets", async () => {
    const first = await client.rememberAgentMemory({
      identity: "lead:upd",
      title: "Standup",
      body: "Standup is at 9.",
    });
    const updated = await client.updateAgentMemory({
      identity: "lead:upd",
      memoryId: first.memoryId,
      title: "Standup",
      body: "Standup moved to 10.",
    });
    assert.equal(updated.supersedes, first.memoryId);
    assert.notEqual(updated.memoryId, first.memoryId);
    const { records } = await client.recallAgentMemory({ identity: "lead:upd", selection: "always" });
    assert.deepEqual(
      records.map((r) => [r.memoryId, r.body]),
      [[updated.memoryId, "Standup moved to 10."]],
    );

    const forgotten = await client.forgetAgentMemory({ identity: "lead:upd", memoryId: updated.memoryId });
    assert.deepEqual(forgotten, { memoryId: updated.memoryId, deleted: true });
    const again = await client.forgetAgentMemory({ identity: "lead:upd", memoryId: updated.memoryId });
    assert.equal(again.deleted, false);
    assert.deepEqual((await client.recallAgentMemory({ identity: "lead:upd", selection: "always" })).records, []);
  });

  it("turns an invalid param into a MetaError -32602 naming the field", async () => {
    const err = await client.recallAgentMemory({ identity: "lead:main", maxEntries: 65 }).then(
      () => assert.fail("expected a MetaError"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof MetaError, String(err));
    assert.equal(err.code, ErrorCode.InvalidParams);
    assert.match(err.message, /max_entries/);
    assert.equal(err.method, "meta/agent_memory/recall");

    await assert.rejects(
      client.rememberAgentMemory({ identity: "lead:main", title: " ", body: "x" }),
      (e: unknown) => e instanceof MetaError && e.code === -32602 && /title/.test(e.message),
    );
    // A typed error's data comes through as the wire has it.
    await assert.rejects(
      client.rememberAgentMemory({ identity: "lead:main", title: "Key", body: "AKIAIOSFODNN7EXAMPLE" }),
      (e: unknown) =>
        e instanceof MetaError && e.code === -32602 && (e.data as { kind?: string }).kind === "memory_write_refused",
    );
  });

  it("indexes, queries and counts the ledger, leaving metadata keys as they are", async () => {
    const metadata = { sourceDoc: "runbook", page_no: 3, nested: { innerKey: [{ deep_key: true }] } };
    const indexed = await client.memoryIndex({
      entity: "identity:ops",
      topic: "Deployment",
      fact: "Production deploys require approval.",
      metadata,
    });
    assert.deepEqual(indexed, {
      entity: "identity:ops",
      topic: "deployment",
      store: "knowledge_graph",
      assertionId: indexed.assertionId,
      conflictActive: false,
    });
    assert.match(indexed.assertionId ?? "", /^memory-assert-\d{6}$/);

    const conflict = await client.memoryIndex({
      entity: "identity:ops",
      topic: "deployment",
      conflict: true,
      conflictReason: "two runbooks disagree",
    });
    assert.equal(conflict.conflictActive, true);
    assert.equal(conflict.assertionId, null);

    const found = await client.memoryQuery({ entity: "identity:ops" });
    assert.equal(found.assertions.length, 1);
    const [assertion] = found.assertions;
    assert.equal(assertion?.assertionId, indexed.assertionId);
    assert.equal(typeof assertion?.indexedAtMs, "number");
    assert.deepEqual(assertion?.metadata, metadata);
    assert.deepEqual(
      found.conflicts.map((c) => [c.topic, c.reason, typeof c.updatedAtMs]),
      [["deployment", "two runbooks disagree", "number"]],
    );
    assert.deepEqual((await client.memoryQuery({ query: "nothing like it" })).assertions, []);

    const { stores } = await client.memoryStores();
    assert.deepEqual(
      stores.map((s) => s.store),
      ["knowledge_graph", "vector", "timeline", "todo", "top_of_mind"],
    );
    assert.equal(stores[0]?.recordCount, 2);

    await assert.rejects(
      client.memoryIndex({ entity: "identity:ops", topic: "deployment" }),
      (e: unknown) => e instanceof MetaError && e.code === -32602 && /fact is required/.test(e.message),
    );
  });

  it("drives a host session: open, context, turn, tool result, memory tool, reset, close", async () => {
    await client.rememberAgentMemory({
      identity: "assistant:ops",
      title: "Pager",
      body: "The pager rotation changes on Mondays.",
    });
    const session = await client.openSession({ identity: "assistant:ops" });
    assert.match(session.key, /^sess-/);

    const context = await session.buildContext();
    assert.match(context.text ?? "", /pager rotation/);
    assert.equal(context.injected.length, 1);

    const turn = await session.turn("When does the pager rotation change?");
    assert.match(turn.text, /When does the pager rotation change\?/);
    assert.ok(Array.isArray(turn.injected));

    const stored = await session.memoryTool({
      action: "remember",
      title: "Oncall handoff",
      body: "Oncall handoff happens in the #ops channel.",
      tags: ["oncall"],
    });
    assert.deepEqual([stored.isError, stored.outcome], [false, "stored"]);
    assert.match(stored.content, /Stored memory mem-/);

    // The memory tool's arguments are the LLM's: sent as given, never renamed.
    const recalled = await session.memoryTool({ action: "recall", query_text: "oncall handoff", max_entries: 2 });
    assert.equal(recalled.isError, false);
    assert.match(recalled.content, /"memory_id"/);
    const camel = await session.memoryTool({ action: "recall", queryText: "oncall" });
    assert.equal(camel.isError, true);
    assert.match(camel.content, /queryText/);
    // Arguments as JSON text (the OpenAI shape) work too.
    const text = await session.memoryTool(JSON.stringify({ action: "recall" }));
    assert.equal(text.isError, false);

    const trusted = await session.toolResult({ toolName: "calculator" });
    assert.deepEqual(trusted, { trusted: true, tainted: false });
    const mcp = await session.toolResult({ toolName: "search", provenance: { kind: "mcp", source_id: "github" } });
    assert.deepEqual(mcp, { trusted: false, tainted: true });
    const quarantined = await session.memoryTool({
      action: "remember",
      title: "From the web",
      body: "Planted advice.",
    });
    assert.equal(quarantined.outcome, "quarantined");

    const oldKey = session.key;
    const reset = await session.reset();
    assert.equal(reset.sessionKey, session.key);
    assert.notEqual(session.key, oldKey);
    assert.deepEqual(await session.compact(), { sessionKey: session.key });
    assert.deepEqual(await session.close(), { closed: true, harvest: null });
    await assert.rejects(session.turn("still there?"), (e: unknown) => e instanceof MetaError && e.code === -32602);

    // A taint reported before any session exists, for the identity (in its realm).
    const early = await client.toolResult({ identity: "assistant:early", realm: "lab", toolName: "web_fetch" });
    assert.deepEqual(early, { trusted: false, tainted: true });
    const inherited = await client.openSession({ identity: "assistant:early", realm: "lab" });
    const held = await inherited.memoryTool({ action: "remember", title: "Early", body: "Read before the session." });
    assert.equal(held.outcome, "quarantined");

    // A message from a tainted peer session taints the receiver; the ended key says why it ended.
    const receiver = await client.openSession({ identity: "assistant:writer" });
    assert.deepEqual(await receiver.peerMessage(inherited.key), { tainted: true });
    await assert.rejects(
      session.buildContext(),
      (e: unknown) => e instanceof MetaError && e.code === -32602 && (e.data as { reason?: string })?.reason === "closed",
    );
  });

  it("hands out the memory tool definitions in the provider's own keys", async () => {
    const anthropic = await client.memoryToolDefinitions({ format: "anthropic" });
    assert.equal(anthropic.tools.length, 1);
    const [tool] = anthropic.tools;
    assert.equal(tool?.name, "memory");
    assert.ok("input_schema" in (tool ?? {}), "Anthropic's input_schema must not be renamed");
    const schema = tool?.input_schema as { additionalProperties?: unknown; properties?: Record<string, unknown> };
    assert.equal(schema.additionalProperties, false);
    assert.ok("query_text" in (schema.properties ?? {}));
    const mcp = await client.memoryToolDefinitions();
    assert.ok("inputSchema" in (mcp.tools[0] ?? {}));
  });

  it("gates actions: evaluate, pending, decide, audit", async () => {
    const low = await client.evaluateGating({ action: "read_docs", actorId: "agent:a", riskTier: "r1" });
    assert.equal(low.outcome, "allowed");
    assert.equal(low.pendingId, null);
    const high = await client.evaluateGating({
      action: "deploy",
      actorId: "agent:a",
      riskTier: "r3",
      rationale: "release 1.2",
      approvalTimeoutMs: 600_000,
      entity: "service:billing",
      topic: "release",
    });
    assert.equal(high.outcome, "pending_approval");
    assert.match(high.pendingId ?? "", /^gate-pending-/);
    await client.memoryIndex({ entity: "service:gate", topic: "cutover", conflict: true });
    const blocked = await client.evaluateGating({
      action: "cutover",
      actorId: "agent:a",
      riskTier: "r3",
      entity: "service:gate",
      topic: "cutover",
    });
    assert.deepEqual([blocked.outcome, blocked.fallbackReason], ["safe_draft", "memory_conflict"]);
    const { pending } = await client.gatingPending();
    assert.deepEqual(
      pending.map((p) => [p.pendingId, p.actorId, p.riskTier]),
      [[high.pendingId, "agent:a", "r3"]],
    );
    const decided = await client.decideGating({
      pendingId: high.pendingId ?? "",
      approverId: "human:ops",
      decision: "approve",
    });
    assert.equal(decided.outcome, "allowed");
    assert.equal(decided.nextPendingId, null);
    await assert.rejects(
      client.decideGating({ pendingId: high.pendingId ?? "", approverId: "agent:a", decision: "approve" }),
      (e: unknown) => e instanceof MetaError && e.code === -32602,
    );
    const { entries } = await client.gatingAudit({ limit: 10 });
    assert.ok(entries.length >= 3);
    assert.ok(entries.every((e) => typeof e.auditId === "string" && typeof e.timestampMs === "number"));
    assert.ok(entries.some((e) => e.eventType === "pending_created"));
  });

  it("pages the timeline, leaving event data keys as they are", async () => {
    const session = await client.openSession({ identity: "assistant:timeline" });
    await session.toolResult({ toolName: "web_fetch" });
    let after: string | undefined;
    const seen: { eventType: string; data: Record<string, unknown> }[] = [];
    for (let page = 0; page < 50; page++) {
      const result = await client.timelineQuery(after === undefined ? { limit: 50 } : { after, limit: 50 });
      seen.push(...result.events);
      if (result.nextAfter === null) break;
      after = result.nextAfter;
    }
    const taint = seen.find((e) => e.eventType === "memory.taint.transition" && e.data.session_key === session.key);
    assert.ok(taint, `no taint event for ${session.key} among ${seen.map((e) => e.eventType).join(", ")}`);
    assert.equal("sessionKey" in taint.data, false);
    await session.close();
  });

  it("reports status and capabilities in camelCase; call() stays raw", async () => {
    const status = await client.status();
    assert.equal(typeof status.contractVersion, "string");
    assert.equal(status.stateDir, gateway.stateDir);
    assert.equal(status.features.agentMemory?.enabled, true);
    assert.ok(status.storage.slots.some((s) => s.domain === "agent_memory"));
    assert.equal(typeof status.storage.blobStorePersistent, "boolean");

    const capabilities = await client.capabilities();
    assert.ok(capabilities.methods.includes("meta/agent_memory/remember"));
    assert.equal(capabilities.contractVersion, status.contractVersion);

    const raw = await client.call<{ contract_version: string; state_dir: string }>("meta/status");
    assert.equal(raw.contract_version, status.contractVersion);
    assert.equal(raw.state_dir, gateway.stateDir);

    const doctor = await client.storageDoctor({ stateDir: gateway.stateDir });
    assert.equal(doctor.stateDir, gateway.stateDir);
    assert.ok(Array.isArray(doctor.diagnosis.findings));

    await assert.rejects(
      client.call("meta/no_such_method"),
      (e: unknown) => e instanceof MetaError && e.code === -32601,
    );
  });
});

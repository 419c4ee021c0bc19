// Key conversion and opaque paths, without a gateway.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { camelToSnake, fromWire, METHODS, snakeToCamel, toWire } from "../src/index.js";

describe("key conversion", () => {
  it("renames keys both ways", () => {
    assert.equal(camelToSnake("createdAfterMs"), "created_after_ms");
    assert.equal(camelToSnake("identity"), "identity");
    assert.equal(snakeToCamel("created_at_ms"), "createdAtMs");
    assert.equal(snakeToCamel("contract_version"), "contractVersion");
    for (const spec of Object.values(METHODS)) {
      for (const key of spec.params) assert.equal(camelToSnake(snakeToCamel(key)), key);
    }
  });

  it("converts recursively through objects and arrays, dropping undefined", () => {
    assert.deepEqual(fromWire({ records: [{ memory_id: "m", created_at_ms: 1, tags: ["a_b"] }], next_cursor: null }), {
      records: [{ memoryId: "m", createdAtMs: 1, tags: ["a_b"] }],
      nextCursor: null,
    });
    assert.deepEqual(toWire({ identity: "i", queryText: "q", maxEntries: undefined, realm: null }), {
      identity: "i",
      query_text: "q",
      realm: null,
    });
  });

  it("leaves opaque paths untouched", () => {
    const metadata = { sourceDoc: "x", page_no: 1, deep: { innerKey: [{ a_b: 1 }] } };
    assert.deepEqual(toWire({ conflictReason: "r", metadata }, METHODS["meta/memory/index"].opaqueParams), {
      conflict_reason: "r",
      metadata,
    });
    const wire = { assertions: [{ assertion_id: "a", metadata, indexed_at_ms: 2 }], conflicts: [{ updated_at_ms: 3 }] };
    assert.deepEqual(fromWire(wire, METHODS["meta/memory/query"].opaqueResult), {
      assertions: [{ assertionId: "a", metadata, indexedAtMs: 2 }],
      conflicts: [{ updatedAtMs: 3 }],
    });
    const args = { action: "recall", query_text: "x", maxEntries: 2 };
    assert.deepEqual(toWire({ sessionKey: "s", arguments: args }, METHODS["meta/session/memory_tool"].opaqueParams), {
      session_key: "s",
      arguments: args,
    });
    const provenance = { kind: "mcp", source_id: "github" };
    assert.deepEqual(
      toWire({ toolName: "t", provenance, isError: false }, METHODS["meta/session/tool_result"].opaqueParams),
      { tool_name: "t", provenance, is_error: false },
    );
    const tools = [{ name: "memory", input_schema: { additionalProperties: false } }];
    assert.deepEqual(fromWire({ tools }, METHODS["meta/session/tool_definitions"].opaqueResult), { tools });
    const events = { events: [{ event_id: "e", event_type: "t", data: { session_key: "s" } }], next_after: "e" };
    assert.deepEqual(fromWire(events, METHODS["meta/timeline/query"].opaqueResult), {
      events: [{ eventId: "e", eventType: "t", data: { session_key: "s" } }],
      nextAfter: "e",
    });
    const doc = {
      openrpc: "1.3.2",
      methods: [{ name: "m", paramStructure: "by-name", params: [{ name: "query_text" }] }],
    };
    assert.deepEqual(fromWire(doc, METHODS["rpc.discover"].opaqueResult), doc);
  });
});

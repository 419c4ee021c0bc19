// The package's public surface, pinned: a change to it is a deliberate one.

import assert from "node:assert/strict";
import { it } from "node:test";

import * as client from "../src/index.js";

it("exports exactly the public API", () => {
  assert.deepEqual(Object.keys(client).sort(), [
    "AccessDenied",
    "AuditVerdictRefused",
    "CapabilityUnavailable",
    "ConfigError",
    "ConsoleSurface",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT_MS",
    "ErrorCode",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "METHODS",
    "MemoryBackendUnavailable",
    "Meta",
    "MetaAuthError",
    "MetaBuilder",
    "MetaClient",
    "MetaClientError",
    "MetaConnectionError",
    "MetaError",
    "MetaHandle",
    "MetaTimeoutError",
    "MethodNotFound",
    "ParseError",
    "ProposalReviewRefused",
    "ProtocolError",
    "PurgeIncomplete",
    "QuarantineReviewRefused",
    "ReadOnly",
    "Session",
    "SessionRefused",
    "StorageRefused",
    "StoreCorrupt",
    "StoreUnavailable",
    "UnknownRecord",
    "VERSION",
    "WriteRefused",
    "camelToSnake",
    "errorFromWire",
    "fromWire",
    "memory",
    "snakeToCamel",
    "toWire",
  ]);
});

it("roots every error in MetaClientError, with the wire fields on MetaError", () => {
  const auth = new client.MetaAuthError(-32030, "authentication failed", { kind: "unauthenticated" }, { status: 401 });
  assert.ok(auth instanceof client.MetaError && auth instanceof client.MetaClientError && auth instanceof Error);
  assert.deepEqual(
    [auth.name, auth.code, auth.status, auth.data],
    ["MetaAuthError", -32030, 401, { kind: "unauthenticated" }],
  );
  const connection = new client.MetaConnectionError("refused", { method: "meta/status" });
  const timeout = new client.MetaTimeoutError("meta/status", 5);
  for (const err of [connection, timeout]) {
    assert.ok(err instanceof client.MetaClientError);
    assert.ok(!(err instanceof client.MetaError));
  }
  assert.ok(!(timeout instanceof client.MetaConnectionError), "a timeout is not retried like a connection error");
  assert.equal(timeout.message, "meta/status got no answer within 5 ms");
});

it("gives each wire error the class its code (and data.kind) names, still a MetaError", () => {
  const refused = client.errorFromWire(-32602, "secret", { kind: "memory_write_refused", rule: "secret-detected" });
  assert.ok(refused instanceof client.WriteRefused && refused instanceof client.InvalidParams);
  assert.ok(refused instanceof client.MetaError && refused instanceof client.MetaClientError);
  assert.deepEqual([refused.name, refused.code, refused.rule], ["WriteRefused", -32602, "secret-detected"]);
  const unknown = client.errorFromWire(-32001, "unknown memory record 'x'");
  assert.deepEqual([unknown.name, unknown.code, unknown.data], ["UnknownRecord", -32001, undefined]);
  const made = new client.ParseError("Parse error");
  assert.ok(made instanceof client.ProtocolError);
  assert.equal(made.code, -32700);
  // A code no class stands for stays a plain MetaError that carries it.
  const other = client.errorFromWire(-32099, "new");
  assert.deepEqual([other.constructor, other.code], [client.MetaError, -32099]);
  const backend = client.errorFromWire(-32012, "Memory backend unavailable: disk full");
  assert.ok(backend instanceof client.MemoryBackendUnavailable);
  assert.equal(backend.detail, "disk full");
});

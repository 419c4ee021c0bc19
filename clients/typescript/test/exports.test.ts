// The package's public surface, pinned: a change to it is a deliberate one.

import assert from "node:assert/strict";
import { it } from "node:test";

import * as client from "../src/index.js";

it("exports exactly the public API", () => {
  assert.deepEqual(Object.keys(client).sort(), [
    "ConsoleSurface",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT_MS",
    "ErrorCode",
    "METHODS",
    "MetaAuthError",
    "MetaClient",
    "MetaClientError",
    "MetaConnectionError",
    "MetaError",
    "MetaTimeoutError",
    "Session",
    "VERSION",
    "camelToSnake",
    "fromWire",
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

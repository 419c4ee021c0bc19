// Timeouts, connection errors and the retry policy, against raw TCP servers that misbehave.

import assert from "node:assert/strict";
import { after, describe, it } from "node:test";

import { MetaClient, MetaConnectionError, MetaTimeoutError } from "../src/index.js";
import { freePort, rawServer, type RawServer } from "../testing/gateway.js";

describe("failures", () => {
  const servers: RawServer[] = [];
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  it("times out against a server that accepts and never answers, without retrying", async () => {
    const silent = await rawServer(() => undefined);
    servers.push(silent);
    const client = await MetaClient.connect({ url: silent.url, timeoutMs: 150 });
    const started = Date.now();
    const err = await client.status().then(
      () => assert.fail("expected a timeout"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof MetaTimeoutError, String(err));
    assert.equal(err.method, "meta/status");
    assert.equal(err.timeoutMs, 150);
    assert.ok(Date.now() - started < 2_000);
    assert.equal(silent.connections, 1, "a timeout is not retried");
    // A per-call timeout overrides the client's.
    await assert.rejects(
      client.capabilities({ timeoutMs: 50 }),
      (e: unknown) => e instanceof MetaTimeoutError && e.timeoutMs === 50,
    );
    await client.close();
  });

  it("reports a refused connection as MetaConnectionError", async () => {
    const port = await freePort();
    const client = await MetaClient.connect({ url: `http://127.0.0.1:${port}` });
    const err = await client.status().then(
      () => assert.fail("expected a connection error"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof MetaConnectionError, String(err));
    assert.match(err.message, /ECONNREFUSED/);
    assert.equal(err.method, "meta/status");
  });

  it("retries idempotent reads once on a connection error, and writes never", async () => {
    const hangUp = await rawServer((socket) => socket.destroy());
    servers.push(hangUp);
    const client = await MetaClient.connect({ url: hangUp.url });

    await assert.rejects(client.recallAgentMemory({ identity: "a" }), MetaConnectionError);
    assert.equal(hangUp.connections, 2, "a read is tried twice");

    await assert.rejects(client.rememberAgentMemory({ identity: "a", title: "t", body: "b" }), MetaConnectionError);
    assert.equal(hangUp.connections, 3, "a write is tried once");

    await assert.rejects(client.memoryIndex({ entity: "e", topic: "t", fact: "f" }), MetaConnectionError);
    assert.equal(hangUp.connections, 4, "a ledger write is tried once");

    // The raw escape hatch follows the table: reads retry, writes do not, unknown methods do not.
    await assert.rejects(client.call("meta/memory/query", {}), MetaConnectionError);
    assert.equal(hangUp.connections, 6);
    await assert.rejects(
      client.call("meta/agent_memory/forget", { identity: "a", memory_id: "m" }),
      MetaConnectionError,
    );
    assert.equal(hangUp.connections, 7);
    await assert.rejects(client.call("meta/whatever"), MetaConnectionError);
    assert.equal(hangUp.connections, 8);

    const noRetry = await MetaClient.connect({ url: hangUp.url, maxRetries: 0 });
    await assert.rejects(noRetry.status(), MetaConnectionError);
    assert.equal(hangUp.connections, 9);
  });

  it("a read that fails once and then succeeds resolves", async () => {
    // A minimal HTTP server answering with the request's own id.
    const replying = await rawServer((socket) => {
      socket.on("data", (chunk) => {
        const text = String(chunk);
        const id = /"id":(\d+)/.exec(text)?.[1] ?? "null";
        const body = JSON.stringify({
          jsonrpc: "2.0",
          id: Number(id),
          result: { stores: [{ store: "vector", record_count: 7 }] },
        });
        socket.write(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
        );
        socket.end();
      });
    });
    servers.push(replying);
    let calls = 0;
    const client = await MetaClient.connect({
      url: replying.url,
      // The first attempt fails as a refused connection would; the second reaches the server.
      fetch: (async (input: string, init: RequestInit) => {
        if (calls++ === 0) throw new TypeError("fetch failed", { cause: new Error("connect ECONNRESET") });
        return fetch(input, init);
      }) as typeof fetch,
    });
    const result = await client.memoryStores();
    assert.deepEqual(result, { stores: [{ store: "vector", recordCount: 7 }] });
    assert.equal(calls, 2);
  });

  it("reports a reply that is not JSON as MetaConnectionError", async () => {
    const proxy = await rawServer((socket) => {
      socket.on("data", () => {
        const body = "<html>502 Bad Gateway</html>";
        socket.write(
          `HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/html\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
        );
        socket.end();
      });
    });
    servers.push(proxy);
    const client = await MetaClient.connect({ url: proxy.url });
    const err = await client.rememberAgentMemory({ identity: "a", title: "t", body: "b" }).then(
      () => assert.fail("expected a connection error"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof MetaConnectionError, String(err));
    assert.equal(err.status, 502);
    assert.match(err.message, /not JSON/);
  });

  it("refuses a URL that is not http(s)", async () => {
    await assert.rejects(MetaClient.connect({ url: "ftp://example" }), TypeError);
    await assert.rejects(MetaClient.connect({ url: "localhost:8765" }), TypeError);
  });
});

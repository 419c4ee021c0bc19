// The client's method table against the gateway's own OpenRPC document (rpc.discover): every
// wire method the client calls exists, every key it can send is declared, every key the gateway
// requires is one the client's types require too, and unknown keys are refused by name.

import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { METHODS, MetaClient, MetaError, type MethodSpec, type OpenRpcDocument } from "../src/index.js";
import { GATEWAY, removeTemps, startHttpGateway, tempDir, type HttpGateway } from "../testing/gateway.js";

describe("the method table against rpc.discover", () => {
  let gateway: HttpGateway;
  let client: MetaClient;
  let document: OpenRpcDocument;
  let consoleDocument: OpenRpcDocument;

  before(async () => {
    gateway = await startHttpGateway();
    client = await MetaClient.connect({ url: gateway.url });
    document = await client.discover();
    consoleDocument = await client.console.discover();
  });

  after(async () => {
    await client?.close();
    await gateway?.stop();
    await removeTemps();
  });

  it("is an OpenRPC 1.x document of by-name methods", () => {
    assert.match(document.openrpc, /^1\.\d+\.\d+$/);
    assert.equal(typeof document.info.title, "string");
    assert.ok(document.methods.length > 0);
    for (const method of document.methods) {
      assert.equal(method.paramStructure, "by-name", method.name);
      assert.ok(Array.isArray(method.params), method.name);
    }
  });

  it("declares every method the client calls, with every key the client can send", () => {
    const declared = new Map(document.methods.map((m) => [m.name, m]));
    const onConsole = new Map(consoleDocument.methods.map((m) => [m.name, m]));
    const problems: string[] = [];
    for (const [name, spec] of Object.entries(METHODS) as [string, MethodSpec][]) {
      // A console method is declared by the console's own document (POST /console/rpc).
      const method = (spec.surface === "console" ? onConsole : declared).get(name);
      if (method === undefined) {
        problems.push(`${name}: not in the OpenRPC document`);
        continue;
      }
      const params = new Map(method.params.map((p) => [p.name, p]));
      for (const key of spec.params) {
        if (!params.has(key)) problems.push(`${name}: the client sends '${key}', which the gateway does not declare`);
      }
      const required: readonly string[] = spec.required;
      for (const param of method.params) {
        if (param.required === true && !required.includes(param.name)) {
          problems.push(
            `${name}: the gateway requires '${param.name}', which the client's params type leaves optional`,
          );
        }
      }
      for (const key of required) {
        if (!(spec.params as readonly string[]).includes(key))
          problems.push(`${name}: required '${key}' is not a param`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it("is the same document at GET /openrpc.json and over stdio", async () => {
    const response = await fetch(`${gateway.url}/openrpc.json`);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), document);

    const stdio = await MetaClient.spawn({ stateDir: join(await tempDir(), "state"), command: GATEWAY });
    try {
      const overStdio = await stdio.discover();
      assert.deepEqual(
        overStdio.methods.map((m) => m.name),
        document.methods.map((m) => m.name),
      );
    } finally {
      await stdio.close();
    }
  });

  it("lists the client's methods in meta/capabilities", async () => {
    const { methods } = await client.capabilities();
    const consoleMethods = (await client.console.capabilities()).methods;
    const missing = Object.entries(METHODS as Record<string, MethodSpec>)
      .filter(([name, spec]) => !(spec.surface === "console" ? consoleMethods : methods).includes(name))
      .map(([name]) => name);
    assert.deepEqual(missing, []);
  });

  it("gets unknown keys refused by name, after their conversion to snake_case", async () => {
    const params = { identity: "lead:main", queryText: "x", notAParam: 1 } as never;
    await assert.rejects(
      client.recallAgentMemory(params),
      (e: unknown) => e instanceof MetaError && e.code === -32602 && /not_a_param/.test(e.message),
    );
  });
});

// Meta.builder()...build(): the builder's options reach a real `meta_gateway stdio` child, and what
// the gateway's config does not take is refused at the call, naming it.

import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, describe, it } from "node:test";

import {
  CapabilityUnavailable,
  ConfigError,
  InvalidParams,
  Meta,
  MetaConnectionError,
  MetaHandle,
  memory,
  StorageRefused,
  type LocalJsonBackend,
} from "../src/index.js";
import { GATEWAY, removeTemps, tempDir } from "../testing/gateway.js";

const ACCESS = `# the access rules
[access]
enabled = true
admins = ["ops"]

[[access.rules]]
id = "crew-reads"
groups = ["crew"]
actions = ["agent.memory.read"]
`;

describe("Meta.builder()", () => {
  after(async () => {
    await removeTemps();
  });

  it("runs the spec's options in a gateway child, which holds the state dir until close", async () => {
    const dir = await tempDir();
    const stateDir = join(dir, "state");
    const rules = join(dir, "access.toml");
    await writeFile(rules, ACCESS);
    const meta = await Meta.builder()
      .persistentState(stateDir)
      .memory(memory.localJson())
      .agentMemory({
        realm: "tenant-a",
        selection: "contextual",
        maxEntries: 2,
        recallTimeoutMs: 500,
        recallFailurePolicy: "skip",
        llmWrites: "quarantined",
        contentTrust: { trustedMcpServers: ["knowledge_graph"], untrustedTools: ["scrape_page"] },
      })
      .roster({ identity: "lead:main", mob: "crew", labels: { team: "platform" } })
      .accessControl(rules)
      .consoleReadOnly()
      .gateway(GATEWAY)
      .build();
    try {
      assert.ok(meta instanceof MetaHandle);
      const { features } = await meta.client.status();
      assert.deepEqual(
        [features.agentMemory?.realm, features.agentMemory?.llmWrites, features.ledger?.persisted],
        ["tenant-a", "quarantined", true],
      );
      for (const n of [1, 2, 3]) {
        await meta.rememberAgentMemory("lead:main", { title: `Note ${n}`, body: `Body number ${n}.` });
      }
      assert.equal((await meta.recallAgentMemory("lead:main", { selection: "always" })).length, 2, "maxEntries");
      assert.ok((await meta.client.openSession({ identity: "lead:main", mob: "crew" })).key, "the roster's mob");
      await assert.rejects(
        meta.client.openSession({ identity: "stranger", mob: "crew" }),
        (e: unknown) => e instanceof InvalidParams && /not a member/.test(e.message),
      );
      // The child holds the state dir: a second one is refused.
      await assert.rejects(
        Meta.builder().persistentState(stateDir).gateway(GATEWAY).build(),
        (e: unknown) => e instanceof StorageRefused && /already serves/.test(e.message),
      );
    } finally {
      await meta.close();
    }
    const again = await Meta.builder().persistentState(stateDir).agentMemory({ realm: "tenant-a" }).build();
    assert.equal((await again.recallAgentMemory("lead:main", { selection: "always" })).length, 3);
    await again.close();
  });

  it("builds from an empty config: no ledger file and no agent memory until asked for", async () => {
    const meta = await Meta.builder().persistentState(join(await tempDir(), "state")).gateway(GATEWAY).build();
    try {
      const { features } = await meta.client.status();
      assert.equal(features.ledger?.persisted, false);
      await assert.rejects(meta.recallAgentMemory("lead:main"), CapabilityUnavailable);
    } finally {
      await meta.close();
    }
    const off = await Meta.builder().persistentState(join(await tempDir(), "state")).agentMemory(false).build();
    await assert.rejects(off.recallAgentMemory("lead:main"), CapabilityUnavailable);
    await off.close();
  });

  it("refuses an option the config does not have at the call, naming the nearest one", () => {
    const refused = (options: object, message: RegExp) =>
      assert.throws(
        () => Meta.builder().agentMemory(options as never),
        (e: unknown) => e instanceof ConfigError && e.code === -32602 && message.test(e.message),
      );
    refused({ maxEntriez: 8 }, /^agent_memory got unsupported option\(s\): 'maxEntriez' \(did you mean 'maxEntries'\?\)$/);
    refused({ max_entries: 8 }, /'max_entries' \(did you mean 'maxEntries'\?\)/);
    refused({ colour: "blue" }, /unsupported option\(s\): 'colour'$/);
    const nested = [
      "agent_memory.content_trust got unsupported option(s): 'trustedMcpServer' (did you mean 'trustedMcpServers'?)",
      "agent_memory.steward got unsupported option(s): 'cadense' (did you mean 'cadence'?)",
    ].join("; ");
    assert.throws(
      () => Meta.builder().agentMemory({ contentTrust: { trustedMcpServer: [] }, steward: { cadense: "*/1h" } } as never),
      (e: unknown) => e instanceof ConfigError && e.message === nested,
    );
    assert.throws(() => Meta.builder().agentMemory("yes" as never), TypeError);
    assert.throws(
      () => Meta.builder().roster({ identity: "a", mobs: "crew" } as never),
      (e: unknown) =>
        e instanceof ConfigError && e.message === "roster[0] got unsupported option(s): 'mobs' (did you mean 'mob'?)",
    );
  });

  it("takes one localJson() backend for memory, and nothing else", () => {
    const refused = (call: () => unknown, message: RegExp) =>
      assert.throws(call, (e: unknown) => e instanceof TypeError && message.test(e.message));
    refused(() => Meta.builder().memory({ stores: ["kg"] } as never), /memory got unsupported option\(s\): stores/);
    refused(() => Meta.builder().memory(memory.localJson(), { stores: [] }), /unsupported option\(s\): stores/);
    refused(() => Meta.builder().memory({ kind: "local_json" } as LocalJsonBackend), /unsupported option\(s\): kind/);
    refused(
      () => memory.localJson({ healthcheckEndpoint: "http://x" } as never),
      /'healthcheckEndpoint' \(did you mean 'healthCheckEndpoint'\?\)/,
    );
    refused(() => memory.localJson({ healthCheckEndpoint: 8080 } as never), /must be a string/);
    assert.deepEqual({ ...memory.localJson({ healthCheckEndpoint: "http://127.0.0.1:1" }) }, {
      kind: "local_json",
      healthCheckEndpoint: "http://127.0.0.1:1",
    });
  });

  it("rejects build() without persistentState, a rosterProvider, and a bad access file", async () => {
    await assert.rejects(
      Meta.builder().agentMemory().build(),
      (e: unknown) => e instanceof TypeError && /persistentState\(path\) is required/.test(e.message),
    );
    assert.throws(
      () => Meta.builder().rosterProvider(() => undefined),
      (e: unknown) => e instanceof TypeError && /cannot cross into the meta_gateway child/.test(e.message),
    );
    const dir = await tempDir();
    assert.throws(() => Meta.builder().accessControl(join(dir, "missing.toml")), (e: unknown) =>
      e instanceof ConfigError && /missing\.toml: cannot be read/.test(e.message),
    );
    for (const text of ['[access]\nadmins = ["ops"]\n[console]\nread_only = true\n', 'enabled = true\n', "# nothing\n"]) {
      const path = join(dir, "other.toml");
      await writeFile(path, text);
      assert.throws(() => Meta.builder().accessControl(path), (e: unknown) =>
        e instanceof ConfigError && /holds one \[access\] table and nothing else/.test(e.message),
      );
    }
  });

  it("rejects build() with the gateway's refusal of a value, or a command that does not exist", async () => {
    const stateDir = join(await tempDir(), "state");
    await assert.rejects(
      Meta.builder().persistentState(stateDir).agentMemory({ recallTimeoutMs: 0 }).gateway(GATEWAY).build(),
      (e: unknown) =>
        e instanceof InvalidParams && /agent_memory\.recall_timeout_ms must be between 1 and 30000/.test(e.message),
    );
    const rules = join(await tempDir(), "access.toml");
    await writeFile(rules, "[access]\nenabled = true\n");
    await assert.rejects(
      Meta.builder().persistentState(stateDir).accessControl(rules).gateway(GATEWAY).build(),
      (e: unknown) => e instanceof InvalidParams && /at least one admin/.test(e.message),
    );
    await assert.rejects(
      Meta.builder().persistentState(stateDir).gateway("/nonexistent/meta_gateway").build(),
      (e: unknown) => e instanceof MetaConnectionError && /ENOENT/.test(e.message),
    );
  });
});

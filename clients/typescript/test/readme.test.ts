// The README's TypeScript example, run as written against a real gateway: the ```ts block of
// ../../README.md with its import pointed at this package's built entry and its URL at a test
// gateway, saved as an .mjs (top-level await) and run by node. tests/sdk/test_readme_in_order.py
// walks the rest of the README and checks that this test reads the block.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { delimiter, dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

import { MetaClient } from "../src/index.js";
import { GATEWAY, removeTemps, sha256, startHttpGateway, tempDir, writeConfig, type HttpGateway } from "../testing/gateway.js";

// From dist/test/ (where this runs) to the repository's README and this package's built entry.
const README = fileURLToPath(new URL("../../../../README.md", import.meta.url));
const ENTRY = new URL("../src/index.js", import.meta.url).href;
// The node running these tests (src/node-shim.d.ts declares only what the package uses).
const NODE = (process as typeof process & { execPath: string }).execPath;

async function readmeBlock(): Promise<string> {
  const blocks = [...(await readFile(README, "utf8")).matchAll(/```ts\n([\s\S]*?)```/g)];
  assert.equal(blocks.length, 1, "the README shows one ```ts block");
  return blocks[0]![1]!;
}

/** `text` with `from` replaced by `to`, which must occur exactly once (the block must not drift). */
function replaceOnce(text: string, from: string, to: string): string {
  assert.equal(text.split(from).length - 1, 1, `the README's ts block should name ${from} once`);
  return text.replace(from, () => to);
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runNode(file: string, cwd: string, env: Record<string, string | undefined>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [file], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The block, runnable here: this package for `@meta-memory/client`, and a line that prints what
 * its recall found. */
function runnable(block: string, url: string | null): string {
  let code = replaceOnce(block, '"@meta-memory/client"', JSON.stringify(ENTRY));
  if (url !== null) code = replaceOnce(code, '"http://127.0.0.1:8765"', JSON.stringify(url));
  else {
    // The block's alternative: `// or: await MetaClient.spawn(...)` in place of the connect call.
    const spawned = /^\/\/ or: (await MetaClient\.spawn\(.*\))$/m.exec(code);
    assert.ok(spawned, "the README's ts block shows MetaClient.spawn as the alternative");
    code = code.replace(/await MetaClient\.connect\(\{[^\n]*\}\)/, () => spawned[1]!);
  }
  return `${code}\nconsole.log(JSON.stringify({ recalled: records.length, titles: records.map((r) => r.title) }));\n`;
}

describe("the README's TypeScript example", () => {
  const token = crypto.randomUUID();
  let gateway: HttpGateway;

  before(async () => {
    const dir = await tempDir();
    // A gateway that takes an rpc token, which the example reads from META_GATEWAY_TOKEN (and, as such a
    // gateway must, a console token).
    const config = await writeConfig(
      dir,
      [
        '[memory]\nkind = "local_json"\n[agent_memory]',
        `[[rpc.auth.tokens]]\ntoken_sha256 = "${sha256(token)}"\nsubject = "readme"`,
        `[[console.auth.tokens]]\ntoken_sha256 = "${sha256(crypto.randomUUID())}"\nsubject = "ops"\n`,
      ].join("\n"),
    );
    gateway = await startHttpGateway({ config });
  });

  after(async () => {
    await gateway?.stop();
    await removeTemps();
  });

  it("runs as written against a gateway, and its recall finds the record it wrote", async () => {
    const dir = await tempDir();
    const file = join(dir, "readme.mjs");
    await writeFile(file, runnable(await readmeBlock(), gateway.url));
    const run = await runNode(file, dir, { ...process.env, META_GATEWAY_TOKEN: token });
    assert.equal(run.code, 0, `the example failed:\n${run.stderr}`);
    assert.deepEqual(JSON.parse(run.stdout.trim().split("\n").at(-1)!), { recalled: 1, titles: ["Deploys"] });

    const client = await MetaClient.connect({ url: gateway.url, token, timeoutMs: 20_000 });
    try {
      const { records } = await client.recallAgentMemory({ identity: "lead:main", queryText: "who approves deploys?" });
      assert.deepEqual(
        records.map((r) => [r.title, r.body]),
        [["Deploys", "Deploys need ops approval."]],
      );
    } finally {
      await client.close();
    }
  });

  it("runs with its alternative, a spawned stdio gateway on its state dir", async () => {
    const dir = await tempDir();
    const file = join(dir, "readme-spawn.mjs");
    await writeFile(file, runnable(await readmeBlock(), null));
    // The user has meta_gateway on PATH: the one these tests run.
    const path = GATEWAY.includes("/") ? `${dirname(GATEWAY)}${delimiter}${process.env.PATH ?? ""}` : process.env.PATH;
    const run = await runNode(file, dir, { ...process.env, PATH: path });
    assert.equal(run.code, 0, `the example failed:\n${run.stderr}`);
    assert.deepEqual(JSON.parse(run.stdout.trim().split("\n").at(-1)!), { recalled: 1, titles: ["Deploys"] });
  });
});

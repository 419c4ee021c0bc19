// The shared protocol cases (tests/protocol/cases.json, the file Python's handles run too) on the
// TypeScript handle: Meta.builder()...build() over a real gateway child. The expected values are
// the file's; see its "about" for the matching rules.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, describe, it } from "node:test";

import * as client from "../src/index.js";
import { Meta, MetaError, type MetaBuilder, type MetaHandle } from "../src/index.js";
import { GATEWAY, removeTemps, tempDir } from "../testing/gateway.js";

interface ExpectedError {
  class: string;
  code: number;
  message: string;
  data?: unknown;
}
interface Step {
  call: [string, string];
  args: unknown[];
  options?: Record<string, unknown>;
  result?: unknown;
  error?: ExpectedError;
  save?: Record<string, string>;
}
interface Case {
  name: string;
  builder: { call: [string, string]; args: unknown[] }[];
  steps?: Step[];
  refused?: ExpectedError;
}

// dist/test/ → the repository's tests/protocol/.
const FILE = fileURLToPath(new URL("../../../../tests/protocol/cases.json", import.meta.url));
const CASES = (JSON.parse(await readFile(FILE, "utf8")) as { cases: Case[] }).cases;

type Saved = Map<string, unknown>;
type Callable = (...args: unknown[]) => Promise<unknown>;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A result with its keys in the wire's snake_case, to compare with the file's. */
function wire(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(wire);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), wire(item)]),
  );
}

function filled(value: unknown, saved: Saved): unknown {
  if (typeof value === "string" && value.startsWith("$")) return saved.get(value.slice(1));
  if (Array.isArray(value)) return value.map((item) => filled(item, saved));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, filled(v, saved)]));
  return value;
}

/** Where `actual` departs from `expected` under the file's matching rules, or undefined. */
function mismatch(expected: unknown, actual: unknown, saved: Saved, at = "result"): string | undefined {
  if (typeof expected === "string" && expected.startsWith("$")) {
    assert.ok(saved.has(expected.slice(1)), `${at}: nothing saved as ${expected}`);
    expected = saved.get(expected.slice(1));
  }
  if (isObject(expected) && Object.keys(expected).join() === "$match") {
    const ok = typeof actual === "string" && new RegExp(expected.$match as string).test(actual);
    return ok ? undefined : `${at}: ${JSON.stringify(actual)} does not match /${String(expected.$match)}/`;
  }
  if (isObject(expected)) {
    if (!isObject(actual)) return `${at}: expected an object, got ${JSON.stringify(actual)}`;
    for (const [key, want] of Object.entries(expected)) {
      if (!(key in actual)) return `${at}: no field ${key} in ${JSON.stringify(actual)}`;
      const problem = mismatch(want, actual[key], saved, `${at}.${key}`);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) {
      return `${at}: expected ${expected.length} items, got ${JSON.stringify(actual)}`;
    }
    for (const [n, want] of expected.entries()) {
      const problem = mismatch(want, actual[n], saved, `${at}[${n}]`);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  return expected === actual ? undefined : `${at}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}

function checkError(err: unknown, expected: ExpectedError): void {
  const cls = (client as unknown as Record<string, unknown>)[expected.class];
  assert.equal(typeof cls, "function", `no error class ${expected.class}`);
  assert.ok(err instanceof (cls as new () => unknown), `${String(err)} (expected ${expected.class})`);
  assert.ok(err instanceof MetaError);
  assert.equal(err.code, expected.code, err.message);
  assert.ok(err.message.includes(expected.message), err.message);
  if (expected.data !== undefined) {
    const problem = mismatch(expected.data, err.data, new Map(), "data");
    assert.equal(problem, undefined, problem);
  }
}

async function build(c: Case): Promise<MetaHandle> {
  let builder: MetaBuilder = Meta.builder().persistentState(join(await tempDir(), "state")).gateway(GATEWAY);
  for (const step of c.builder) {
    const method = (builder as unknown as Record<string, (...args: unknown[]) => MetaBuilder>)[step.call[1]];
    assert.equal(typeof method, "function", `no builder method ${step.call[1]}`);
    builder = (method as (...args: unknown[]) => MetaBuilder).apply(builder, step.args);
  }
  return builder.build();
}

describe("the shared protocol cases on the TypeScript handle", () => {
  after(async () => {
    await removeTemps();
  });

  it("cover the handle's methods and some refusals", () => {
    const called = new Set(CASES.flatMap((c) => (c.steps ?? []).map((s) => s.call[1])));
    for (const name of ["memoryIndex", "memoryQuery", "memoryStores", "rememberAgentMemory", "recallAgentMemory"]) {
      assert.ok(called.has(name), name);
    }
    assert.ok(CASES.filter((c) => c.refused !== undefined).length >= 3);
  });

  for (const c of CASES) {
    it(c.name, async () => {
      if (c.refused !== undefined) {
        const err = await build(c).then(
          async (handle) => {
            await handle.close();
            return assert.fail("expected the builder to refuse");
          },
          (e: unknown) => e,
        );
        checkError(err, c.refused);
        return;
      }
      const handle = await build(c);
      const saved: Saved = new Map();
      try {
        for (const [n, step] of (c.steps ?? []).entries()) {
          const name = step.call[1];
          const own = (handle as unknown as Record<string, unknown>)[name];
          const target = typeof own === "function" ? handle : handle.client;
          const method = (target as unknown as Record<string, Callable>)[name];
          assert.equal(typeof method, "function", `no method ${name} on the handle or its client`);
          const args = filled(step.args, saved) as unknown[];
          if (step.options !== undefined) args.push(filled(step.options, saved));
          let result: unknown;
          try {
            result = wire(await (method as Callable).apply(target, args));
          } catch (err) {
            assert.ok(step.error !== undefined, `step ${n} (${name}) threw ${String(err)}`);
            checkError(err, step.error);
            continue;
          }
          assert.equal(step.error, undefined, `step ${n} (${name}) returned ${JSON.stringify(result)}`);
          const problem = mismatch(step.result, result, saved);
          assert.equal(problem, undefined, `step ${n} (${name}): ${problem}`);
          for (const [key, field] of Object.entries(step.save ?? {})) {
            saved.set(key, (result as Record<string, unknown>)[field]);
          }
        }
      } finally {
        await handle.close();
      }
    });
  }
});

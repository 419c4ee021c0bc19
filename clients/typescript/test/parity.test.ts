// The client held to the Python package it mirrors, read from the Python beside the gateway: the
// builder's option tables against the config models, the error classes and the wire → class map
// against meta_memory.errors, and the config TOML against the Python client's.

import assert from "node:assert/strict";
import { before, describe, it } from "node:test";

import * as client from "../src/index.js";
import { AGENT_MEMORY_OPTIONS, configSection, LOCAL_JSON_OPTIONS, ROSTER_OPTIONS } from "../src/options.js";
import { tomlText } from "../src/toml.js";
import { python } from "../testing/gateway.js";

// Options as the spec's examples write them, and a config mapping with every kind of value.
const OPTIONS = {
  realm: "default",
  maxEntries: 8,
  recallFailurePolicy: "skip",
  contentTrust: { trustedMcpServers: ["knowledge_graph"], untrustedTools: ["scrape_page"] },
  steward: { cadence: "*/6h", perMob: true },
  distiller: false,
};
const CONFIG = {
  memory: { kind: "local_json", health_check_endpoint: "http://127.0.0.1:9/x" },
  agent_memory: { max_entries: 8, defang_inbound: false, content_trust: { untrusted_tools: ["a \"quoted\" \\ tool"] } },
  roster: [{ identity: "lead:main", mob: "crew", labels: { team: "platform", "two words": "ünïcode\ttab" } }],
  console: { read_only: true },
  empty: {},
};

const DUMP = `
import json, typing
from pydantic import BaseModel
import meta_memory.errors as E
from meta_memory.client.transport import toml_text
from meta_memory.config import AgentMemoryConfig, LedgerConfig, RosterEntry
from meta_memory.keywords import camel_case, snake_case_keys

def table(model):
    out = {}
    for name, field in model.model_fields.items():
        kinds = [field.annotation, *typing.get_args(field.annotation)]
        nested = [k for k in kinds if isinstance(k, type) and issubclass(k, BaseModel)]
        out[camel_case(name)] = table(nested[0]) if nested else None
    return out

classes = {}
for name in E.__all__:
    cls = getattr(E, name)
    if isinstance(cls, type) and issubclass(cls, E.MetaError) and cls is not E.MetaError:
        parent = next(b for b in cls.__mro__[1:] if issubclass(b, E.MetaError))
        classes[name] = {"code": cls.code, "parent": parent.__name__}
codes = sorted({*E._BY_CODE, -32099})
kinds = [None, *E._BY_KIND]
wire = [
    {"code": code, "kind": kind, "class": type(E.error_from_wire({"code": code, "message": "m", "data": {"kind": kind}})).__name__}
    for code in codes for kind in kinds
]
print(json.dumps({
    "agent_memory": table(AgentMemoryConfig),
    "roster": table(RosterEntry),
    "local_json": {k: v for k, v in table(LedgerConfig).items() if k != "kind"},
    "classes": classes,
    "wire": wire,
    "options": snake_case_keys(json.loads(${JSON.stringify(JSON.stringify(OPTIONS))}), "agent_memory"),
    "toml": toml_text(json.loads(${JSON.stringify(JSON.stringify(CONFIG))})),
}))
`;

interface Dump {
  agent_memory: unknown;
  roster: unknown;
  local_json: unknown;
  classes: Record<string, { code: number; parent: string }>;
  wire: { code: number; kind: string | null; class: string }[];
  options: unknown;
  toml: string;
}

type ErrorClass = (new (...args: never[]) => client.MetaError) & { readonly code?: number };

const exported = client as unknown as Record<string, unknown>;

function errorClasses(): Map<string, ErrorClass> {
  const found = new Map<string, ErrorClass>();
  for (const [name, value] of Object.entries(exported)) {
    if (typeof value === "function" && value.prototype instanceof client.MetaError) found.set(name, value as ErrorClass);
  }
  return found;
}

describe("the client against the Python package", () => {
  let py: Dump;

  before(async () => {
    py = JSON.parse(await python(DUMP)) as Dump;
  });

  it("takes exactly the agentMemory, roster and localJson keys Python's builder takes", () => {
    assert.deepEqual(AGENT_MEMORY_OPTIONS, py.agent_memory);
    assert.deepEqual(ROSTER_OPTIONS, py.roster);
    assert.deepEqual(LOCAL_JSON_OPTIONS, py.local_json);
  });

  it("turns camelCase options into the config keys Python's builder writes", () => {
    assert.deepEqual(configSection("agent_memory", OPTIONS, AGENT_MEMORY_OPTIONS), py.options);
  });

  it("writes a config as the same TOML text as the Python client", () => {
    assert.equal(tomlText(CONFIG), py.toml);
  });

  it("has an error class for each of Python's, with its code and its parent", () => {
    const ours = errorClasses();
    for (const [name, { code, parent }] of Object.entries(py.classes)) {
      const cls = ours.get(name);
      assert.ok(cls !== undefined, `no ${name} exported`);
      assert.equal(cls.code, code, `${name}.code`);
      assert.equal((Object.getPrototypeOf(cls) as { name: string }).name, parent, `${name}'s parent`);
      assert.equal(new (cls as unknown as new (m: string) => Error)("m").name, name, `${name}.name`);
    }
    // And none Python lacks, beside the client's own (the HTTP credential refusal).
    const extra = [...ours.keys()].filter((name) => !(name in py.classes));
    assert.deepEqual(extra, ["MetaAuthError"]);
  });

  it("turns each wire code and data.kind into the class Python's error_from_wire does", () => {
    assert.ok(py.wire.length > 50);
    for (const { code, kind, class: name } of py.wire) {
      const err = client.errorFromWire(code, "m", { kind }, { method: "meta/x" });
      assert.equal(err.constructor.name, name, `code ${code}, kind ${String(kind)}`);
      assert.ok(err instanceof client.MetaError);
      assert.deepEqual([err.code, err.message, err.data, err.method], [code, "m", { kind }, "meta/x"]);
    }
  });
});

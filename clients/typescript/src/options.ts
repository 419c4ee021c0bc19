/**
 * The builder's options: their types, the tables of keys each one takes (the camelCase spellings
 * of the gateway's config fields, `meta_memory.config`; test/parity.test.ts compares them with the
 * Python models), and the check that refuses a key a table does not have, naming the nearest one
 * as Python's builder does.
 */

import { camelToSnake } from "./case.js";
import { ConfigError } from "./errors.js";

/** `contentTrust`: where tool results come from, for the taint of the sessions that read them. */
export interface ContentTrustOptions {
  trustedMcpServers?: string[];
  untrustedTools?: string[];
  trustedTools?: string[];
}

/** `distiller`: `true` for its defaults, `false` for off, or its options (on unless `enabled: false`). */
export interface DistillerOptions {
  enabled?: boolean;
  runsPerHour?: number;
  minInteractions?: number;
  model?: string;
}

/** `steward`: `true` for its defaults, `false` for off, or its options (on unless `enabled: false`). */
export interface StewardOptions {
  enabled?: boolean;
  cadence?: string;
  model?: string;
  perMob?: boolean;
  runsPerDay?: number;
  minSignals?: number;
}

/** `hygienist`: parked in this release; only off is accepted. */
export interface HygienistOptions {
  enabled?: false;
}

/** `postgres` (with `store: "postgres"`): the database several gateways share; exactly one of
 * `dsn` and `dsnEnv` (the name of an environment variable holding the DSN). */
export interface PostgresOptions {
  dsn?: string;
  dsnEnv?: string;
  poolMin?: number;
  poolMax?: number;
  timeoutS?: number;
}

/** `agentMemory(...)`: the `[agent_memory]` section, in camelCase. The gateway checks each value
 * at `build()` (its ranges and choices: docs/configuration.md). */
export interface AgentMemoryOptions {
  enabled?: boolean;
  realm?: string;
  selection?: "always" | "contextual";
  /** 1..64 (default 8). */
  maxEntries?: number;
  /** 1..30000 (default 500). */
  recallTimeoutMs?: number;
  recallFailurePolicy?: "skip" | "fail";
  instructionHeader?: string;
  perTurnInjection?: "off" | "budgeted";
  defangInbound?: boolean;
  store?: "sqlite" | "postgres" | "markdown";
  llmWrites?: "observed" | "quarantined";
  recorderTool?: boolean;
  sessionIdleTimeoutS?: number;
  contentTrust?: ContentTrustOptions;
  operatorScope?: "off" | "provisional";
  /** Retired: only `"off"`. */
  selector?: "off";
  recall?: "lexical" | "hybrid";
  embeddingModel?: string;
  embeddingRuntime?: "auto" | "numpy" | "onnxruntime";
  annMinVectors?: number;
  hygienist?: false | HygienistOptions;
  distiller?: boolean | DistillerOptions;
  steward?: boolean | StewardOptions;
  durability?: "process" | "power";
  indexWorker?: "auto" | "process" | "inline";
  maxOpenRealms?: number;
  postgres?: PostgresOptions;
}

/** A `roster(...)` entry: an identity the app declares, as `[[roster]]` does. */
export interface RosterEntry {
  identity: string;
  mob?: string;
  role?: string;
  /** Your labels, sent as given. */
  labels?: Record<string, string>;
}

/** The keys a table takes: `null` for a value, a nested table for a section. */
export interface OptionTable {
  readonly [key: string]: OptionTable | null;
}

type Keys<T> = { readonly [K in keyof Required<T>]: null };

const CONTENT_TRUST: Keys<ContentTrustOptions> = { trustedMcpServers: null, untrustedTools: null, trustedTools: null };
const DISTILLER: Keys<DistillerOptions> = { enabled: null, runsPerHour: null, minInteractions: null, model: null };
const STEWARD: Keys<StewardOptions> = {
  enabled: null,
  cadence: null,
  model: null,
  perMob: null,
  runsPerDay: null,
  minSignals: null,
};
const HYGIENIST: Keys<HygienistOptions> = { enabled: null };
const POSTGRES: Keys<PostgresOptions> = { dsn: null, dsnEnv: null, poolMin: null, poolMax: null, timeoutS: null };

/** The keys of `agentMemory(...)`; `tsc` holds it to AgentMemoryOptions, and a test to Python's
 * `AgentMemoryConfig`. */
export const AGENT_MEMORY_OPTIONS = {
  enabled: null,
  realm: null,
  selection: null,
  maxEntries: null,
  recallTimeoutMs: null,
  recallFailurePolicy: null,
  instructionHeader: null,
  perTurnInjection: null,
  defangInbound: null,
  store: null,
  llmWrites: null,
  recorderTool: null,
  sessionIdleTimeoutS: null,
  contentTrust: CONTENT_TRUST,
  operatorScope: null,
  selector: null,
  recall: null,
  embeddingModel: null,
  embeddingRuntime: null,
  annMinVectors: null,
  hygienist: HYGIENIST,
  distiller: DISTILLER,
  steward: STEWARD,
  durability: null,
  indexWorker: null,
  maxOpenRealms: null,
  postgres: POSTGRES,
} as const satisfies { readonly [K in keyof Required<AgentMemoryOptions>]: OptionTable | null };

/** The keys of a `roster(...)` entry (`labels` is a table of your own, not checked). */
export const ROSTER_OPTIONS: Keys<RosterEntry> = { identity: null, mob: null, role: null, labels: null };

/** The keys of `memory.localJson(...)`. */
export const LOCAL_JSON_OPTIONS: Keys<{ healthCheckEndpoint?: string }> = { healthCheckEndpoint: null };

// -- did you mean: Python's difflib.get_close_matches(key, spellings, n=1), so both builders
// suggest the same spelling ----------------------------------------------------------------------

function longestMatch(a: string, b: string, alo: number, ahi: number, blo: number, bhi: number): number[] {
  let best = [alo, blo, 0];
  let lengths = new Map<number, number>();
  for (let i = alo; i < ahi; i++) {
    const next = new Map<number, number>();
    for (let j = blo; j < bhi; j++) {
      if (a[i] !== b[j]) continue;
      const k = (lengths.get(j - 1) ?? 0) + 1;
      next.set(j, k);
      if (k > (best[2] as number)) best = [i - k + 1, j - k + 1, k];
    }
    lengths = next;
  }
  return best;
}

function matched(a: string, b: string, alo: number, ahi: number, blo: number, bhi: number): number {
  const [i, j, k] = longestMatch(a, b, alo, ahi, blo, bhi) as [number, number, number];
  if (k === 0) return 0;
  return k + matched(a, b, alo, i, blo, j) + matched(a, b, i + k, ahi, j + k, bhi);
}

/** difflib's SequenceMatcher(None, a, b).ratio(). */
function ratio(a: string, b: string): number {
  const total = a.length + b.length;
  return total === 0 ? 1 : (2 * matched(a, b, 0, a.length, 0, b.length)) / total;
}

/** `` (did you mean 'maxEntries'?)`` for the spelling nearest `key`; `""` when none is near. */
export function didYouMean(key: string, spellings: Iterable<string>): string {
  let best: [number, string] | undefined;
  for (const spelling of spellings) {
    const score = ratio(spelling, key);
    if (score < 0.6) continue;
    if (best === undefined || score > best[0] || (score === best[0] && spelling > best[1])) best = [score, spelling];
  }
  return best === undefined ? "" : ` (did you mean '${best[1]}'?)`;
}

// -- the check ------------------------------------------------------------------------------------

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** `given` with its keys in the config's snake_case, down through the sections `table` names;
 * any key a table does not have is collected in `unknown` under its section's name. */
function convert(
  given: Record<string, unknown>,
  table: OptionTable,
  section: string,
  unknown: Map<string, string[]>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(given)) {
    if (item === undefined) continue;
    if (!Object.hasOwn(table, key)) {
      unknown.set(section, [...(unknown.get(section) ?? []), key]);
      continue;
    }
    const name = camelToSnake(key);
    const nested = table[key];
    out[name] = nested && isPlainObject(item) ? convert(item, nested, `${section}.${name}`, unknown) : item;
  }
  return out;
}

/**
 * `options` in the config's snake_case, once every key is one `table` takes.
 *
 * @param section the config section, as refusals name it (`agent_memory`).
 * @throws ConfigError a key the table (or a nested one) does not have, each named with the nearest
 *   spelling it has: `agent_memory got unsupported option(s): 'maxEntriez' (did you mean 'maxEntries'?)`.
 */
export function configSection(
  section: string,
  options: Record<string, unknown>,
  table: OptionTable,
): Record<string, unknown> {
  const unknown = new Map<string, string[]>();
  const converted = convert(options, table, section, unknown);
  if (unknown.size > 0) {
    const problems = [...unknown].map(([where, keys]) => {
      let spellings: OptionTable = table;
      for (const part of where.split(".").slice(1)) {
        const key = Object.keys(spellings).find((k) => camelToSnake(k) === part) as string;
        spellings = spellings[key] as OptionTable;
      }
      const named = keys.map((key) => `'${key}'${didYouMean(key, Object.keys(spellings))}`).join(", ");
      return `${where} got unsupported option(s): ${named}`;
    });
    throw new ConfigError(problems.join("; "));
  }
  return converted;
}

export { isPlainObject };

/**
 * `Meta.builder()...build()`: the Python builder's options, in camelCase, for a `meta_gateway
 * stdio` child. `build()` writes them as the child's TOML config (in a private temporary directory,
 * removed once the child has booted) and resolves to a MetaHandle over the child.
 *
 *     const meta = await Meta.builder()
 *       .persistentState(".meta/state")
 *       .memory(memory.localJson())
 *       .agentMemory({ realm: "default", selection: "contextual", maxEntries: 8 })
 *       .build();
 *
 * A key the config does not have is refused at the call (ConfigError, naming the nearest key); a
 * value the gateway refuses rejects `build()` with its InvalidParams (or StorageRefused), the
 * message naming the key, as the Python builder's ConfigError does.
 */

import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { MetaClient, type SpawnOptions } from "./client.js";
import { ConfigError } from "./errors.js";
import { MetaHandle } from "./handle.js";
import {
  AGENT_MEMORY_OPTIONS,
  configSection,
  didYouMean,
  isPlainObject,
  LOCAL_JSON_OPTIONS,
  ROSTER_OPTIONS,
  type AgentMemoryOptions,
  type RosterEntry,
} from "./options.js";
import { tomlText } from "./toml.js";

/** The ledger backend `memory.localJson()` makes, for `MetaBuilder.memory`. */
export interface LocalJsonBackend {
  readonly kind: "local_json";
  /** A URL whose `GET /v1/health` must answer 2xx before each persist. */
  readonly healthCheckEndpoint?: string;
}

const BACKENDS = new WeakSet<object>();

function describe(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
}

/** The ledger backends: `memory.localJson({healthCheckEndpoint?})`, one local JSON file under the
 * state dir (the only kind). */
export const memory = {
  localJson(options: { healthCheckEndpoint?: string } = {}): LocalJsonBackend {
    if (!isPlainObject(options)) throw new TypeError(`localJson() takes an options object, not ${describe(options)}`);
    const unknown = Object.keys(options).filter((key) => !Object.hasOwn(LOCAL_JSON_OPTIONS, key));
    if (unknown.length > 0) {
      const named = unknown.map((key) => `'${key}'${didYouMean(key, Object.keys(LOCAL_JSON_OPTIONS))}`);
      throw new TypeError(`localJson() got unsupported option(s): ${named.join(", ")}`);
    }
    const endpoint = options.healthCheckEndpoint;
    if (endpoint !== undefined && typeof endpoint !== "string") {
      throw new TypeError(`localJson() healthCheckEndpoint must be a string URL, not ${describe(endpoint)}`);
    }
    const backend: LocalJsonBackend = Object.freeze(
      endpoint === undefined ? { kind: "local_json" } : { kind: "local_json", healthCheckEndpoint: endpoint },
    );
    BACKENDS.add(backend);
    return backend;
  },
};

/** How `MetaBuilder.gateway` starts the child, beyond its command. */
export type GatewayOptions = Omit<SpawnOptions, "stateDir" | "config" | "command">;

/** Collects the options of a gateway child; `build()` starts it. Each method returns the builder. */
export class MetaBuilder {
  private state: string | undefined;
  private readonly config: Record<string, unknown> = {};
  private access: string | undefined;
  private command: string | undefined;
  private spawnOptions: GatewayOptions = {};

  /** Serve the state directory `path` (created if missing); `build()` requires it. The child holds
   * it alone while it runs. */
  persistentState(path: string): this {
    if (typeof path !== "string" || path === "") throw new TypeError("persistentState(path) takes a non-empty path");
    this.state = path;
    return this;
  }

  /** Persist the assertion ledger under the state dir (without this call it is held in memory
   * only). `backend` is `memory.localJson(...)`, the default and the only kind; the ledger takes no
   * other option (`{stores: [...]}` is refused, naming it). */
  memory(backend?: LocalJsonBackend, ...unsupported: unknown[]): this {
    const given = [...(backend === undefined ? [] : [backend]), ...unsupported];
    const extra = given.filter((item) => !(typeof item === "object" && item !== null && BACKENDS.has(item)));
    if (extra.length > 0 || given.length > 1) {
      const named = extra.flatMap((item) => (isPlainObject(item) ? Object.keys(item) : [describe(item)]));
      throw new TypeError(
        `memory got unsupported option(s): ${named.join(", ") || "a second backend"}; ` +
          "it takes one memory.localJson(...) backend",
      );
    }
    const chosen = backend ?? memory.localJson();
    this.config.memory =
      chosen.healthCheckEndpoint === undefined
        ? { kind: "local_json" }
        : { kind: "local_json", health_check_endpoint: chosen.healthCheckEndpoint };
    return this;
  }

  /** Enable agent memory with `[agent_memory]`'s options (without this call it is off): no
   * argument or `true` for the defaults, `false` for off, or an options object (camelCase, as the
   * spec writes them; nested tables too: `contentTrust: {trustedMcpServers: [...]}`).
   * @throws ConfigError a key the config does not have, named with the nearest one it has. */
  agentMemory(options: boolean | AgentMemoryOptions = true): this {
    if (options === false) {
      this.config.agent_memory = { enabled: false };
    } else if (options === true) {
      this.config.agent_memory = {};
    } else if (isPlainObject(options)) {
      this.config.agent_memory = configSection("agent_memory", options, AGENT_MEMORY_OPTIONS);
    } else {
      throw new TypeError(`agentMemory() takes true, false or an options object, not ${describe(options)}`);
    }
    return this;
  }

  /** Declare identities as `[[roster]]` entries do (`identity`, and `mob`, `role`, `labels`); the
   * access rules and mob sessions read them. Calls add up.
   * @throws ConfigError an entry key the roster does not have. */
  roster(...entries: RosterEntry[]): this {
    const checked = entries.map((entry, n) => {
      if (!isPlainObject(entry)) throw new TypeError(`roster entry ${n} must be an object, not ${describe(entry)}`);
      return configSection(`roster[${n}]`, { ...entry }, ROSTER_OPTIONS);
    });
    const roster = (this.config.roster as unknown[] | undefined) ?? [];
    this.config.roster = [...roster, ...checked];
    return this;
  }

  /** Load the access rules from a TOML file holding one `[access]` table (with its
   * `[[access.rules]]`) and nothing else, as in a gateway config; the gateway validates the rules
   * at `build()`.
   * @throws ConfigError the file cannot be read, or holds something besides `[access]`. */
  accessControl(path: string): this {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (err) {
      throw new ConfigError(`${path}: cannot be read (${err instanceof Error ? err.message : String(err)})`);
    }
    let tables = 0;
    for (const raw of text.split(/\r?\n/)) {
      const line = raw.trim();
      if (line === "" || line.startsWith("#")) continue;
      const header = /^\[\[?\s*([^\][,]+?)\s*\]\]?\s*(#.*)?$/.exec(line);
      const name = header?.[1]?.replace(/["'\s]/g, "");
      // Only [access] and its subtables; no key before the first table (it would be top-level).
      if (header ? name !== "access" && !name?.startsWith("access.") : tables === 0) {
        throw new ConfigError(`${path}: an access-control file holds one [access] table and nothing else`);
      }
      if (header) tables++;
    }
    if (tables === 0) throw new ConfigError(`${path}: an access-control file holds one [access] table and nothing else`);
    this.access = text;
    return this;
  }

  /** Make the console surface read-only: its writes are refused (-32010). */
  consoleReadOnly(): this {
    this.config.console = { ...((this.config.console as Record<string, unknown> | undefined) ?? {}), read_only: true };
    return this;
  }

  /** Refused: a callback cannot cross into the gateway child. Declare identities with `roster()`.
   * @throws TypeError always. */
  rosterProvider(_provider: unknown): never {
    throw new TypeError(
      "rosterProvider(...) cannot cross into the meta_gateway child process: declare identities with roster(...)",
    );
  }

  /** The `meta_gateway` to start (default: `$META_GATEWAY`, else `meta_gateway` on PATH), and how
   * (`args` before `stdio` for a launcher, `timeoutMs`, `env`, ...). */
  gateway(command: string, options: GatewayOptions = {}): this {
    if (typeof command !== "string" || command === "") throw new TypeError("gateway(command) takes a non-empty command");
    this.command = command;
    this.spawnOptions = { ...options };
    return this;
  }

  /**
   * Start `meta_gateway stdio --state-dir <persistentState> --config <the options as TOML>`.
   * Resolves once the child has answered its handshake; close the handle to end it.
   * @throws TypeError persistentState was not called.
   * @throws InvalidParams the gateway refused an option's value (the message names the key).
   * @throws StorageRefused the state dir cannot be served (another runtime holds it, ...).
   * @throws MetaConnectionError the child could not start, or exited.
   */
  async build(): Promise<MetaHandle> {
    if (this.state === undefined) throw new TypeError("persistentState(path) is required");
    const text = tomlText(this.config) + (this.access === undefined ? "" : `\n${this.access}\n`);
    const dir = await mkdtemp(join(tmpdir(), "meta-builder-"));
    try {
      const config = join(dir, "config.toml");
      await writeFile(config, text);
      const command = this.command ?? process.env.META_GATEWAY ?? "meta_gateway";
      const client = await MetaClient.spawn({ ...this.spawnOptions, stateDir: this.state, config, command });
      return new MetaHandle(client);
    } finally {
      // The child reads its config once, at boot.
      await rm(dir, { recursive: true, force: true });
    }
  }
}

/** The entry point: `Meta.builder()...build()` gives a MetaHandle over a gateway child. */
export class Meta {
  private constructor() {}

  /** A new builder, with no options set. */
  static builder(): MetaBuilder {
    return new MetaBuilder();
  }
}

/**
 * Key conversion between the client's camelCase and the wire's snake_case, recursive, except
 * at "opaque" paths: values that are user or third-party data (a ledger `metadata` object, the
 * memory tool's `arguments`, a tool's `provenance`, timeline event `data`, gating audit
 * `detail`, LLM tool definitions, the OpenRPC document) are passed through byte for byte.
 *
 * An opaque path is written in wire (snake_case) keys, `.`-separated, with `*` standing for any
 * element of an array: `assertions.*.metadata`. The empty path `""` makes the whole value opaque.
 */

export function camelToSnake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

export function snakeToCamel(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function convert(
  value: unknown,
  path: string,
  opaque: ReadonlySet<string>,
  rename: (key: string) => string,
  outgoing: boolean,
): unknown {
  if (opaque.has(path)) return value;
  if (Array.isArray(value)) {
    const child = path === "" ? "*" : `${path}.*`;
    return value.map((item) => convert(item, child, opaque, rename, outgoing));
  }
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue; // an absent optional param, not a JSON null
    const renamed = rename(key);
    // Paths are always spelled in wire keys: the renamed key going out, the original coming in.
    const wireKey = outgoing ? renamed : key;
    out[renamed] = convert(item, path === "" ? wireKey : `${path}.${wireKey}`, opaque, rename, outgoing);
  }
  return out;
}

/** camelCase params → snake_case wire params; values at `opaque` paths untouched. */
export function toWire(value: unknown, opaque: readonly string[] = []): unknown {
  return convert(value, "", new Set(opaque), camelToSnake, true);
}

/** snake_case wire result → camelCase result; values at `opaque` paths untouched. */
export function fromWire(value: unknown, opaque: readonly string[] = []): unknown {
  return convert(value, "", new Set(opaque), snakeToCamel, false);
}

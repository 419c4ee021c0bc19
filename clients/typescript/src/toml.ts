/**
 * A config mapping as the TOML file `meta_gateway --config` reads, in the shape the Python client
 * writes (`meta_memory.client.transport.toml_text`): one `"key" = value` line per top-level key,
 * tables inline. Only what a config holds has a form: strings, finite numbers, booleans, arrays
 * and plain objects; an absent (`undefined` or `null`) field of a table is left out.
 */

function key(name: string): string {
  return JSON.stringify(name);
}

function value(item: unknown, where: string): string {
  if (typeof item === "boolean") return item ? "true" : "false";
  if (typeof item === "number") {
    if (!Number.isFinite(item)) throw new TypeError(`config ${where}: ${item} has no TOML form`);
    return JSON.stringify(item);
  }
  // A JSON string is a TOML basic string, once DEL (which TOML wants escaped) is.
  if (typeof item === "string") return JSON.stringify(item).replace(/\x7f/g, "\\u007f");
  if (Array.isArray(item)) return `[${item.map((v) => value(v, where)).join(", ")}]`;
  if (item !== null && typeof item === "object" && Object.getPrototypeOf(item) === Object.prototype) {
    const fields = Object.entries(item as Record<string, unknown>).filter(([, v]) => v !== undefined && v !== null);
    return `{${fields.map(([k, v]) => `${key(k)} = ${value(v, `${where}.${k}`)}`).join(", ")}}`;
  }
  const kind = item === null ? "null" : Array.isArray(item) ? "array" : typeof item;
  throw new TypeError(`config ${where}: ${kind} has no TOML form`);
}

/** `config` as TOML text: each top-level key one line, its tables inline. */
export function tomlText(config: Readonly<Record<string, unknown>>): string {
  return Object.entries(config)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${key(k)} = ${value(v, k)}\n`)
    .join("");
}

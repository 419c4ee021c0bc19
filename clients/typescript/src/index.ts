export { MetaClient, Session, ConsoleSurface, DEFAULT_TIMEOUT_MS, DEFAULT_MAX_RETRIES } from "./client.js";
export type { ConnectOptions, SpawnOptions } from "./client.js";
export {
  MetaClientError,
  MetaError,
  MetaAuthError,
  MetaConnectionError,
  MetaTimeoutError,
  ErrorCode,
} from "./errors.js";
export type { MetaErrorOptions } from "./errors.js";
export { METHODS } from "./methods.js";
export type { MethodSpec, WireMethod } from "./methods.js";
export { camelToSnake, snakeToCamel, toWire, fromWire } from "./case.js";
export type * from "./types.js";
export { VERSION } from "./version.js";

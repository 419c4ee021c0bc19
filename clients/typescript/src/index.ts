export { Meta, MetaBuilder, memory } from "./builder.js";
export type { GatewayOptions, LocalJsonBackend } from "./builder.js";
export { MetaHandle } from "./handle.js";
export type {
  ForgetOptions,
  GetOptions,
  MemoryIndexOptions,
  MemoryQueryFilters,
  RecallOptions,
  RememberOptions,
  UpdateOptions,
} from "./handle.js";
export type {
  AgentMemoryOptions,
  ContentTrustOptions,
  DistillerOptions,
  HygienistOptions,
  PostgresOptions,
  RosterEntry,
  StewardOptions,
} from "./options.js";
export { MetaClient, Session, ConsoleSurface, DEFAULT_TIMEOUT_MS, DEFAULT_MAX_RETRIES } from "./client.js";
export type { ConnectOptions, SpawnOptions } from "./client.js";
export {
  MetaClientError,
  MetaError,
  MetaAuthError,
  MetaConnectionError,
  MetaTimeoutError,
  ErrorCode,
  errorFromWire,
  ProtocolError,
  ParseError,
  InvalidRequest,
  MethodNotFound,
  InvalidParams,
  ConfigError,
  WriteRefused,
  SessionRefused,
  AuditVerdictRefused,
  InternalError,
  UnknownRecord,
  CapabilityUnavailable,
  ReadOnly,
  MemoryBackendUnavailable,
  StorageRefused,
  StoreCorrupt,
  StoreUnavailable,
  PurgeIncomplete,
  AccessDenied,
  QuarantineReviewRefused,
  ProposalReviewRefused,
} from "./errors.js";
export type { MetaErrorOptions } from "./errors.js";
export { METHODS } from "./methods.js";
export type { MethodSpec, WireMethod } from "./methods.js";
export { camelToSnake, snakeToCamel, toWire, fromWire } from "./case.js";
export type * from "./types.js";
export { VERSION } from "./version.js";

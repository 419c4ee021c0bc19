/**
 * What the client throws: one rooted tree. A JSON-RPC error is thrown as the class its code (and
 * `data.kind`) names, the same classes as the Python package's `meta_memory.errors`:
 *
 *     MetaClientError                  anything this client throws
 *     ├── MetaError                    the gateway answered with a JSON-RPC error: code, message, data
 *     │   ├── ProtocolError                    the JSON-RPC envelope was wrong
 *     │   │   ├── ParseError           -32700  not JSON
 *     │   │   ├── InvalidRequest       -32600  JSON, but not a request (or over the size cap)
 *     │   │   └── MethodNotFound       -32601  no such method (or surface)
 *     │   ├── InvalidParams            -32602  a parameter broke a rule; the message names it
 *     │   │   ├── ConfigError          -32602  the builder's options refused (MetaBuilder)
 *     │   │   ├── WriteRefused         -32602  the store validator refused a write (`rule`)
 *     │   │   ├── SessionRefused       -32602  a session key names no session the caller may drive
 *     │   │   └── AuditVerdictRefused  -32602  a usage-audit verdict's resolution was refused
 *     │   ├── InternalError            -32603  a fault inside the gateway (details in its log)
 *     │   ├── UnknownRecord            -32001  no record with that id in the caller's scope
 *     │   ├── CapabilityUnavailable    -32004  not configured here (e.g. agent memory off)
 *     │   ├── ReadOnly                 -32010  a write on a read-only console
 *     │   ├── MemoryBackendUnavailable -32012  the ledger could not persist (`detail`)
 *     │   ├── StorageRefused           -32014  fail-closed storage refusal
 *     │   │   ├── StoreCorrupt         -32014  a store file that cannot be served
 *     │   │   ├── StoreUnavailable     -32014  the database behind the realm stores failed a call
 *     │   │   └── PurgeIncomplete      -32014  a purge deleted its rows, not yet rewrote every file
 *     │   ├── AccessDenied             -32030  the access rules said no
 *     │   ├── QuarantineReviewRefused  -32043  a quarantine decision was refused (`reason`)
 *     │   ├── ProposalReviewRefused    -32043  a decision on a proposal was refused (`reason`)
 *     │   └── MetaAuthError            HTTP 401 (or 400): a missing, wrong or malformed bearer token
 *     ├── MetaConnectionError          no usable answer: refused/reset connection, exited child,
 *     │                                a reply that is not JSON-RPC (idempotent reads retry once)
 *     └── MetaTimeoutError             no answer within timeoutMs (never retried)
 *
 * `data` is the wire error's, untouched (snake_case keys). A code the client does not know is a
 * plain MetaError carrying it. Wrong arguments to the client itself (a URL that is not http(s),
 * no stateDir) are a TypeError.
 */

/** Well-known JSON-RPC error codes of the gateway (src/meta_memory/errors.py). */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  UnknownRecord: -32001,
  CapabilityUnavailable: -32004,
  ReadOnly: -32010,
  MemoryBackendUnavailable: -32012,
  StorageRefused: -32014,
  AccessDenied: -32030,
  QuarantineReviewRefused: -32043,
} as const;

export interface MetaErrorOptions {
  /** The JSON-RPC method that was called. */
  method?: string | undefined;
  /** The HTTP status of the reply (HTTP transport only). */
  status?: number | undefined;
  cause?: unknown;
}

/** The root of every error this client throws. */
export class MetaClientError extends Error {
  override readonly name: string = "MetaClientError";
}

/** A JSON-RPC error the gateway returned. `data` is passed through untouched (snake_case keys). */
export class MetaError extends MetaClientError {
  override readonly name: string = "MetaError";
  readonly code: number;
  readonly data: unknown;
  readonly method: string | undefined;
  readonly status: number | undefined;

  constructor(code: number, message: string, data?: unknown, options: MetaErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.data = data;
    this.method = options.method;
    this.status = options.status;
  }
}

/** The gateway refused the bearer token (HTTP 401, or 400 for a malformed `Authorization`). */
export class MetaAuthError extends MetaError {
  override readonly name: string = "MetaAuthError";
}

/** No usable answer: refused or reset connection, exited child, or a reply that is not JSON-RPC. */
export class MetaConnectionError extends MetaClientError {
  override readonly name: string = "MetaConnectionError";
  readonly method: string | undefined;
  readonly status: number | undefined;

  constructor(message: string, options: MetaErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.method = options.method;
    this.status = options.status;
  }
}

/** No answer within the request's `timeoutMs`. */
export class MetaTimeoutError extends MetaClientError {
  override readonly name: string = "MetaTimeoutError";
  readonly method: string | undefined;
  readonly timeoutMs: number;

  constructor(method: string | undefined, timeoutMs: number) {
    super(`${method ?? "request"} got no answer within ${timeoutMs} ms`);
    this.method = method;
    this.timeoutMs = timeoutMs;
  }
}

// -- one class per wire code, as the Python package's meta_memory.errors ----------------------------

/** The JSON-RPC envelope itself was wrong. */
export class ProtocolError extends MetaError {
  /** The wire code of this class's errors. */
  static readonly code: number = ErrorCode.InternalError;
  override readonly name: string = "ProtocolError";

  constructor(message: string, data?: unknown, options: MetaErrorOptions = {}) {
    super(new.target.code, message, data, options);
  }
}

/** The request was not JSON (-32700). */
export class ParseError extends ProtocolError {
  static override readonly code: number = ErrorCode.ParseError;
  override readonly name: string = "ParseError";
}

/** The JSON was no JSON-RPC 2.0 request: a batch, no method, a bad id, or over the size cap (-32600). */
export class InvalidRequest extends ProtocolError {
  static override readonly code: number = ErrorCode.InvalidRequest;
  override readonly name: string = "InvalidRequest";
}

/** No such method on the surface the call arrived on (-32601). */
export class MethodNotFound extends ProtocolError {
  static override readonly code: number = ErrorCode.MethodNotFound;
  override readonly name: string = "MethodNotFound";
}

/** A parameter broke a rule; the message names it (-32602). */
export class InvalidParams extends MetaError {
  static readonly code: number = ErrorCode.InvalidParams;
  override readonly name: string = "InvalidParams";

  constructor(message: string, data?: unknown, options: MetaErrorOptions = {}) {
    super(new.target.code, message, data, options);
  }
}

/** Configuration refused: a builder option the gateway's config does not have, or a value it
 * refuses at boot (as `InvalidParams` then, with the gateway's message naming the key). */
export class ConfigError extends InvalidParams {
  override readonly name: string = "ConfigError";
}

/** The store validator refused a write (-32602); `rule` names the rule (stable kebab-case). */
export class WriteRefused extends InvalidParams {
  static readonly kind = "memory_write_refused";
  override readonly name: string = "WriteRefused";

  get rule(): string {
    return field(this.data, "rule");
  }
}

/** A session key names no session the caller may drive (-32602); `reason`: `unknown`, `closed`,
 * `reset` or `expired`. Open a new session. */
export class SessionRefused extends InvalidParams {
  static readonly kind = "session_refused";
  override readonly name: string = "SessionRefused";

  get reason(): string {
    return field(this.data, "reason");
  }
}

/** A usage-audit verdict's resolution that cannot be applied (-32602); nothing changed. */
export class AuditVerdictRefused extends InvalidParams {
  static readonly kind = "audit_verdict_refused";
  override readonly name: string = "AuditVerdictRefused";

  get reason(): string {
    return field(this.data, "reason");
  }
}

/** Something failed inside the gateway (-32603); the detail is in its log, never on the wire. */
export class InternalError extends MetaError {
  static readonly code: number = ErrorCode.InternalError;
  override readonly name: string = "InternalError";

  constructor(message: string, data?: unknown, options: MetaErrorOptions = {}) {
    super(new.target.code, message, data, options);
  }
}

/** No record with that id in the caller's scope (-32001). */
export class UnknownRecord extends MetaError {
  static readonly code: number = ErrorCode.UnknownRecord;
  override readonly name: string = "UnknownRecord";

  constructor(message: string, data?: unknown, options: MetaErrorOptions = {}) {
    super(new.target.code, message, data, options);
  }
}

/** What the call needs is not configured or installed there (-32004), e.g. agent memory off. */
export class CapabilityUnavailable extends MetaError {
  static readonly code: number = ErrorCode.CapabilityUnavailable;
  override readonly name: string = "CapabilityUnavailable";

  constructor(message: string, data?: unknown, options: MetaErrorOptions = {}) {
    super(new.target.code, message, data, options);
  }
}

/** A write on a console configured `read_only` (-32010). */
export class ReadOnly extends MetaError {
  static readonly code: number = ErrorCode.ReadOnly;
  static readonly kind = "read_only";
  override readonly name: string = "ReadOnly";

  constructor(message: string, data?: unknown, options: MetaErrorOptions = {}) {
    super(new.target.code, message, data, options);
  }
}

/** The assertion ledger could not persist, or its health check failed (-32012). */
export class MemoryBackendUnavailable extends MetaError {
  static readonly code: number = ErrorCode.MemoryBackendUnavailable;
  override readonly name: string = "MemoryBackendUnavailable";

  constructor(message: string, data?: unknown, options: MetaErrorOptions = {}) {
    super(new.target.code, message, data, options);
  }

  /** The message without its `Memory backend unavailable: ` prefix. */
  get detail(): string {
    return this.message.replace(/^Memory backend unavailable: /, "");
  }
}

/** A fail-closed refusal to serve storage: a state directory at boot, or one store (-32014). */
export class StorageRefused extends MetaError {
  static readonly code: number = ErrorCode.StorageRefused;
  override readonly name: string = "StorageRefused";

  constructor(message: string, data?: unknown, options: MetaErrorOptions = {}) {
    super(new.target.code, message, data, options);
  }
}

/** A store file exists but cannot be served (damaged, unreadable, or from a newer release). */
export class StoreCorrupt extends StorageRefused {
  override readonly name: string = "StoreCorrupt";
}

/** The database behind the realm stores could not serve a call: a write was not applied; retry
 * when the server is back. */
export class StoreUnavailable extends StorageRefused {
  static readonly kind = "store_unavailable";
  override readonly name: string = "StoreUnavailable";
}

/** A purge deleted its records but could not yet rewrite every file of the realm (a reader held
 * one): the rewrite is owed and the gateway's upkeep does it. `data`: `{kind: "purge_incomplete", receipt_id}`. */
export class PurgeIncomplete extends StorageRefused {
  static readonly kind = "purge_incomplete";
  override readonly name: string = "PurgeIncomplete";
}

/** The access rules do not let the caller take the action on the resource (-32030). */
export class AccessDenied extends MetaError {
  static readonly code: number = ErrorCode.AccessDenied;
  static readonly kind = "access_denied";
  override readonly name: string = "AccessDenied";

  constructor(message: string, data?: unknown, options: MetaErrorOptions = {}) {
    super(new.target.code, message, data, options);
  }
}

/** A quarantine decision refused (-32043); `reason`: `content_mismatch`, `not_quarantined`,
 * `gate_pending`, `successor_conflict`. */
export class QuarantineReviewRefused extends MetaError {
  static readonly code: number = ErrorCode.QuarantineReviewRefused;
  static readonly kind = "memory_quarantine_review_refused";
  override readonly name: string = "QuarantineReviewRefused";

  constructor(message: string, data?: unknown, options: MetaErrorOptions = {}) {
    super(new.target.code, message, data, options);
  }

  get reason(): string {
    return field(this.data, "reason");
  }
}

/** An operator's decision on a proposal refused (-32043); nothing was written. `reason`:
 * `content_mismatch`, `already_decided`, `gate_pending`, `operator_scope_off`, `unsupported_scope`. */
export class ProposalReviewRefused extends MetaError {
  static readonly code: number = ErrorCode.QuarantineReviewRefused;
  static readonly kind = "memory_proposal_review_refused";
  override readonly name: string = "ProposalReviewRefused";

  constructor(message: string, data?: unknown, options: MetaErrorOptions = {}) {
    super(new.target.code, message, data, options);
  }

  get reason(): string {
    return field(this.data, "reason");
  }
}

function field(data: unknown, key: string): string {
  const value = data !== null && typeof data === "object" ? (data as Record<string, unknown>)[key] : undefined;
  return value === undefined || value === null ? "" : String(value);
}

interface WireErrorClass {
  readonly code: number;
  new (message: string, data?: unknown, options?: MetaErrorOptions): MetaError;
}

// The way back from the wire, as Python's `error_from_wire`: `data.kind` first (when its class has
// the error's code), then the code.
const BY_KIND: ReadonlyMap<string, WireErrorClass> = new Map<string, WireErrorClass>([
  [WriteRefused.kind, WriteRefused],
  [SessionRefused.kind, SessionRefused],
  [AuditVerdictRefused.kind, AuditVerdictRefused],
  [QuarantineReviewRefused.kind, QuarantineReviewRefused],
  [ProposalReviewRefused.kind, ProposalReviewRefused],
  [AccessDenied.kind, AccessDenied],
  [PurgeIncomplete.kind, PurgeIncomplete],
  [ReadOnly.kind, ReadOnly],
  [StoreUnavailable.kind, StoreUnavailable],
]);
const BY_CODE: ReadonlyMap<number, WireErrorClass> = new Map(
  [
    ParseError,
    InvalidRequest,
    MethodNotFound,
    InvalidParams,
    InternalError,
    UnknownRecord,
    CapabilityUnavailable,
    ReadOnly,
    MemoryBackendUnavailable,
    StorageRefused,
    AccessDenied,
    QuarantineReviewRefused,
  ].map((cls): [number, WireErrorClass] => [cls.code, cls]),
);

/** The error a JSON-RPC error object stands for: the class its `code` (and `data.kind`) names,
 * carrying the wire message and data; a code without a class of its own is a plain MetaError. */
export function errorFromWire(code: number, message: string, data?: unknown, options: MetaErrorOptions = {}): MetaError {
  const kind = data !== null && typeof data === "object" ? (data as Record<string, unknown>).kind : undefined;
  const byKind = typeof kind === "string" ? BY_KIND.get(kind) : undefined;
  const cls = byKind !== undefined && byKind.code === code ? byKind : BY_CODE.get(code);
  return cls === undefined ? new MetaError(code, message, data, options) : new cls(message, data, options);
}

/**
 * What the client throws: one rooted tree.
 *
 *     MetaClientError               anything this client throws
 *     ├── MetaError                 the gateway answered with a JSON-RPC error: code, message, data
 *     │   └── MetaAuthError         HTTP 401 (or 400): a missing, wrong or malformed bearer token
 *     ├── MetaConnectionError       no usable answer: refused/reset connection, exited child,
 *     │                             a reply that is not JSON-RPC (idempotent reads retry once)
 *     └── MetaTimeoutError          no answer within timeoutMs (never retried)
 *
 * `data` is the wire error's, untouched (snake_case keys). Wrong arguments to the client itself
 * (a URL that is not http(s), no stateDir) are a TypeError.
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

/**
 * The two transports: HTTP (`POST {url}/rpc`, `POST {url}/console/rpc`) and stdio (a
 * `meta_gateway stdio` child speaking JSON lines). Both send one JSON-RPC 2.0 request and
 * resolve to its `result`, or reject with the errors of errors.ts (a JSON-RPC error as the class
 * its code names).
 */

import { spawn, type ChildProcess } from "node:child_process";

import { errorFromWire, MetaAuthError, MetaConnectionError, MetaTimeoutError } from "./errors.js";

export type Surface = "sdk" | "console";

export interface SendOptions {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

export interface Transport {
  readonly kind: "http" | "stdio";
  send(surface: Surface, method: string, params: unknown, options: SendOptions): Promise<unknown>;
  close(): Promise<void>;
}

interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function rpcError(value: unknown): RpcErrorObject | undefined {
  if (!isObject(value) || !isObject(value.error)) return undefined;
  const { code, message, data } = value.error;
  if (typeof code !== "number" || typeof message !== "string") return undefined;
  return { code, message, data };
}

function envelope(id: number, method: string, params: unknown): string {
  const message: Record<string, unknown> = { jsonrpc: "2.0", id, method };
  if (params !== undefined) message.params = params;
  return JSON.stringify(message);
}

/** The reply's result, or the MetaError (subclass) it carries. */
function settle(reply: unknown, method: string, status?: number): unknown {
  const error = rpcError(reply);
  if (error !== undefined) throw errorFromWire(error.code, error.message, error.data, { method, status });
  if (!isObject(reply) || reply.jsonrpc !== "2.0" || !("result" in reply)) {
    throw new MetaConnectionError(`${method}: the reply is not a JSON-RPC 2.0 response`, { method, status });
  }
  return reply.result;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

function describeFetchFailure(err: unknown): string {
  const cause = isObject(err) ? (err as { cause?: unknown }).cause : undefined;
  const detail = cause instanceof Error ? cause.message : err instanceof Error ? err.message : String(err);
  return detail;
}

// -- HTTP -------------------------------------------------------------------------------------------

export interface HttpTransportOptions {
  url: string;
  token?: string | undefined;
  consoleToken?: string | undefined;
  headers?: Record<string, string> | undefined;
  fetch?: typeof fetch | undefined;
}

export class HttpTransport implements Transport {
  readonly kind = "http" as const;
  private readonly base: string;
  private readonly options: HttpTransportOptions;
  private readonly fetchImpl: typeof fetch;
  private nextId = 0;

  constructor(options: HttpTransportOptions) {
    let parsed: URL;
    try {
      parsed = new URL(options.url);
    } catch {
      throw new TypeError(`url must be an absolute http(s) URL (got ${JSON.stringify(options.url)})`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new TypeError(`url must be an http(s) URL (got ${JSON.stringify(options.url)})`);
    }
    this.base = options.url.replace(/\/+$/, "");
    this.options = options;
    this.fetchImpl = options.fetch ?? fetch;
  }

  async send(surface: Surface, method: string, params: unknown, options: SendOptions): Promise<unknown> {
    const url = `${this.base}${surface === "console" ? "/console/rpc" : "/rpc"}`;
    const token = surface === "console" ? this.options.consoleToken : this.options.token;
    const headers: Record<string, string> = {
      ...this.options.headers,
      "Content-Type": "application/json",
      Accept: "application/json",
    };
    if (token !== undefined) headers.Authorization = `Bearer ${token}`;
    const id = ++this.nextId;

    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, options.timeoutMs);
    const userSignal = options.signal;
    const onAbort = () => controller.abort();
    if (userSignal !== undefined) {
      if (userSignal.aborted) controller.abort();
      else userSignal.addEventListener("abort", onAbort, { once: true });
    }
    let status: number;
    let text: string;
    try {
      const response = await this.fetchImpl(url, {
        method: "POST",
        headers,
        body: envelope(id, method, params),
        signal: controller.signal,
      });
      status = response.status;
      text = await response.text();
    } catch (err) {
      if (timedOut) throw new MetaTimeoutError(method, options.timeoutMs);
      if (userSignal?.aborted) throw abortReason(userSignal);
      throw new MetaConnectionError(`${method}: could not reach the gateway at ${url}: ${describeFetchFailure(err)}`, {
        method,
        cause: err,
      });
    } finally {
      clearTimeout(timer);
      userSignal?.removeEventListener("abort", onAbort);
    }

    let reply: unknown;
    try {
      reply = JSON.parse(text);
    } catch {
      const snippet = text.length > 200 ? `${text.slice(0, 200)}…` : text;
      throw new MetaConnectionError(
        `${method}: the gateway at ${url} answered HTTP ${status} with a body that is not JSON: ${JSON.stringify(snippet)}`,
        { method, status },
      );
    }
    const error = rpcError(reply);
    if (status === 401 || (status === 400 && isObject(error?.data) && error.data.kind === "unauthenticated")) {
      const which = surface === "console" ? "consoleToken" : "token";
      const reason = isObject(error?.data) ? error.data.reason : undefined;
      const why =
        reason === "missing_token"
          ? `the gateway requires a bearer token and none was sent (pass \`${which}\`)`
          : `the gateway refused the bearer token (check \`${which}\`)`;
      throw new MetaAuthError(
        error?.code ?? -32030,
        `${method}: ${why}: HTTP ${status}, ${error?.message ?? "unauthorized"}`,
        error?.data,
        {
          method,
          status,
        },
      );
    }
    if (error !== undefined) throw errorFromWire(error.code, error.message, error.data, { method, status });
    if (status !== 200) {
      throw new MetaConnectionError(`${method}: the gateway at ${url} answered HTTP ${status}`, { method, status });
    }
    if (isObject(reply) && reply.id !== id) {
      throw new MetaConnectionError(`${method}: the reply carries id ${JSON.stringify(reply.id)}, not ${id}`, {
        method,
        status,
      });
    }
    return settle(reply, method, status);
  }

  async close(): Promise<void> {
    // fetch keeps no connection of ours open beyond its own idle keep-alive pool.
  }
}

// -- stdio ------------------------------------------------------------------------------------------

export interface StdioTransportOptions {
  command: string;
  args: readonly string[];
  env?: Record<string, string | undefined> | undefined;
  cwd?: string | undefined;
  /** `pipe` (default): keep the child's stderr, quoted in errors when it exits; `inherit`: pass it through. */
  stderr?: "pipe" | "inherit" | "ignore" | undefined;
  /** How long to wait for the handshake line. */
  startTimeoutMs: number;
  /** How long close() waits for the child to exit on its own before it signals it. */
  closeGraceMs: number;
}

interface Pending {
  method: string;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
  timer: ReturnType<typeof setTimeout>;
  cleanup: () => void;
}

const STDERR_TAIL_CHARS = 4000;

export class StdioTransport implements Transport {
  readonly kind = "stdio" as const;
  /** The child's handshake line, `{contract_version}`. */
  handshake: Record<string, unknown> = {};
  private readonly child: ChildProcess;
  private readonly options: StdioTransportOptions;
  private readonly pending = new Map<number, Pending>();
  /** Ids in the order they were written: the gateway answers lines in order, so a reply with
   * `id: null` (an oversized line) belongs to the oldest one still unanswered. */
  private readonly order: number[] = [];
  private nextId = 0;
  private buffer = "";
  private stderrTail = "";
  private exited: { code: number | null; signal: string | null } | undefined;
  private readonly exitedPromise: Promise<void>;
  private spawnError: Error | undefined;
  private closing = false;
  private stdoutClosed = false;
  private onHandshake: ((line: string) => void) | undefined;
  private onDeath: ((err: Error) => void) | undefined;

  private constructor(options: StdioTransportOptions) {
    this.options = options;
    const stderr = options.stderr ?? "pipe";
    this.child = spawn(options.command, options.args, {
      stdio: ["pipe", "pipe", stderr],
      env: options.env,
      cwd: options.cwd,
    });
    let markExited: () => void = () => undefined;
    this.exitedPromise = new Promise((resolve) => (markExited = resolve));
    this.child.on("error", (err) => {
      // ENOENT / EACCES: the command could not start (no 'exit' follows).
      this.spawnError = err;
      this.die(new MetaConnectionError(`could not start ${options.command}: ${err.message}`, { cause: err }));
      markExited();
    });
    this.child.on("exit", (code, signal) => {
      this.exited = { code, signal };
      markExited();
    });
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", (chunk) => this.onData(chunk));
    // 'close' on stdout comes after the last line was read; the exit status is known by then or soon.
    this.child.stdout.on("close", () => {
      // A child that closed its stdout can answer nothing more; give its exit status a moment
      // to arrive, so that the error can say how it ended.
      this.stdoutClosed = true;
      void this.exitWithin(1000).then(() => this.die(this.deathError()));
    });
    this.child.stdin.on("error", () => undefined); // EPIPE after the child died: reported by 'exit'
    if (stderr === "pipe") {
      this.child.stderr.setEncoding("utf8");
      this.child.stderr.on("data", (chunk) => {
        this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
      });
    }
  }

  /** Start the child and wait for its handshake line; a refused boot rejects with its MetaError. */
  static async start(options: StdioTransportOptions): Promise<StdioTransport> {
    const transport = new StdioTransport(options);
    try {
      await transport.waitForHandshake();
    } catch (err) {
      await transport.close();
      throw err;
    }
    transport.idle();
    return transport;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  private waitForHandshake(): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.onHandshake = undefined;
        this.onDeath = undefined;
        reject(new MetaTimeoutError("the gateway's handshake", this.options.startTimeoutMs));
      }, this.options.startTimeoutMs);
      this.onDeath = (err) => {
        clearTimeout(timer);
        this.onHandshake = undefined;
        reject(err);
      };
      this.onHandshake = (line) => {
        clearTimeout(timer);
        this.onHandshake = undefined;
        this.onDeath = undefined;
        let first: unknown;
        try {
          first = JSON.parse(line);
        } catch {
          reject(
            new MetaConnectionError(`the gateway's first line is not JSON: ${JSON.stringify(line.slice(0, 200))}`),
          );
          return;
        }
        const error = rpcError(first);
        if (error !== undefined) {
          // The boot was refused (bad config, storage refusal): the child exits with status 2.
          reject(errorFromWire(error.code, error.message, error.data));
          return;
        }
        if (!isObject(first) || typeof first.contract_version !== "string") {
          reject(
            new MetaConnectionError(
              `the gateway's first line is not a handshake: ${JSON.stringify(line.slice(0, 200))}`,
            ),
          );
          return;
        }
        this.handshake = first;
        resolve();
      };
      if (this.spawnError !== undefined || this.exited !== undefined) this.onDeath(this.deathError());
    });
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    let newline: number;
    while ((newline = this.buffer.indexOf("\n")) >= 0) {
      const line = this.buffer.slice(0, newline).replace(/\r$/, "");
      this.buffer = this.buffer.slice(newline + 1);
      if (line.trim() === "") continue;
      if (this.onHandshake !== undefined) {
        this.onHandshake(line);
        continue;
      }
      this.onLine(line);
    }
  }

  private onLine(line: string): void {
    let reply: unknown;
    try {
      reply = JSON.parse(line);
    } catch {
      // Nothing says which request this was meant for: fail every one in flight.
      this.failAll(
        new MetaConnectionError(`the gateway wrote a line that is not JSON: ${JSON.stringify(line.slice(0, 200))}`),
      );
      return;
    }
    let id = isObject(reply) ? reply.id : undefined;
    if (id === null) id = this.order[0]; // answered in order: the oldest unanswered line
    if (typeof id !== "number") return;
    const at = this.order.indexOf(id);
    if (at >= 0) this.order.splice(at, 1);
    const pending = this.pending.get(id);
    if (pending === undefined) return; // a reply to a request that timed out
    this.finish(id, pending);
    try {
      pending.resolve(settle(reply, pending.method));
    } catch (err) {
      pending.reject(err);
    }
  }

  send(surface: Surface, method: string, params: unknown, options: SendOptions): Promise<unknown> {
    if (surface !== "sdk") {
      return Promise.reject(new TypeError("the console surface is served over HTTP only (use MetaClient.connect)"));
    }
    if (this.closing) return Promise.reject(new MetaConnectionError(`${method}: the client is closed`, { method }));
    if (this.stdoutClosed || this.exited !== undefined || this.spawnError !== undefined || this.child.stdin.destroyed) {
      return Promise.reject(this.deathError(method));
    }
    if (options.signal?.aborted) return Promise.reject(abortReason(options.signal));
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      const signal = options.signal;
      const onAbort = () => {
        const pending = this.pending.get(id);
        if (pending === undefined) return;
        this.finish(id, pending);
        reject(abortReason(signal as AbortSignal));
      };
      const timer = setTimeout(() => {
        const pending = this.pending.get(id);
        if (pending === undefined) return;
        this.finish(id, pending);
        reject(new MetaTimeoutError(method, options.timeoutMs));
      }, options.timeoutMs);
      const cleanup = () => signal?.removeEventListener("abort", onAbort);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (this.pending.size === 0) this.busy();
      this.pending.set(id, { method, resolve, reject, timer, cleanup });
      this.order.push(id);
      this.child.stdin.write(`${envelope(id, method, params)}\n`);
    });
  }

  private finish(id: number, pending: Pending): void {
    clearTimeout(pending.timer);
    pending.cleanup();
    this.pending.delete(id);
    if (this.pending.size === 0 && !this.closing) this.idle();
  }

  private failAll(err: Error): void {
    for (const [id, pending] of [...this.pending]) {
      this.finish(id, pending);
      pending.reject(err);
    }
  }

  private die(err: Error): void {
    this.onDeath?.(err);
    this.failAll(err);
  }

  private deathError(method?: string): MetaConnectionError {
    if (this.spawnError !== undefined) {
      return new MetaConnectionError(`could not start ${this.options.command}: ${this.spawnError.message}`, {
        method,
        cause: this.spawnError,
      });
    }
    const how =
      this.exited === undefined
        ? "closed its stdout"
        : this.exited.signal !== null
          ? `was killed by ${this.exited.signal}`
          : `exited with status ${this.exited.code}`;
    const tail = this.stderrTail.trim().split("\n").slice(-10).join("\n");
    const prefix = method === undefined ? "" : `${method}: `;
    const stderr = tail === "" ? "" : `; its last stderr lines:\n${tail}`;
    return new MetaConnectionError(`${prefix}the gateway process ${how}${stderr}`, { method });
  }

  /** Nothing in flight: let Node exit even if close() is never called (the child then sees EOF). */
  private idle(): void {
    this.child.unref();
    this.child.stdin.unref?.();
    this.child.stdout.unref?.();
    this.child.stderr?.unref?.();
  }

  private busy(): void {
    this.child.ref();
    this.child.stdin.ref?.();
    this.child.stdout.ref?.();
    this.child.stderr?.ref?.();
  }

  /** Close stdin (the gateway answers what it has read, then exits), wait `closeGraceMs`, then
   * SIGTERM, and SIGKILL two seconds later. Resolves once the child has exited. */
  async close(): Promise<void> {
    if (this.spawnError !== undefined) return;
    this.closing = true;
    this.busy();
    if (this.exited === undefined) {
      if (!this.child.stdin.writableEnded) this.child.stdin.end();
      if (!(await this.exitWithin(this.options.closeGraceMs))) {
        this.child.kill("SIGTERM");
        if (!(await this.exitWithin(2000))) {
          this.child.kill("SIGKILL");
          await this.exitedPromise;
        }
      }
    }
    this.die(this.deathError());
  }

  private exitWithin(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      void this.exitedPromise.then(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}

/**
 * MetaClient: the gateway's methods as camelCase calls, over HTTP (`MetaClient.connect`) or a
 * `meta_gateway stdio` child process (`MetaClient.spawn`).
 */

import { fromWire, toWire } from "./case.js";
import { MetaConnectionError } from "./errors.js";
import { methodSpec, type MethodSpec, type ParamsOf, type WireMethod } from "./methods.js";
import { HttpTransport, StdioTransport, type Surface, type Transport } from "./transport.js";
import type {
  CapabilitiesResult,
  DecideGatingParams,
  DecideGatingResult,
  DecideProposalParams,
  DecideProposalResult,
  EvaluateGatingParams,
  EvaluateGatingResult,
  ForgetAgentMemoryParams,
  ForgetAgentMemoryResult,
  GatingAuditParams,
  GatingAuditResult,
  GatingPendingResult,
  AgentMemoryHistoryResult,
  GetAgentMemoryParams,
  GetAgentMemoryResult,
  ListAgentMemoryParams,
  ListAgentMemoryResult,
  MemoryIndexParams,
  MemoryIndexResult,
  MemoryQueryParams,
  MemoryQueryResult,
  MemoryStoresResult,
  MemoryToolArguments,
  MemoryToolDefinitionsParams,
  MemoryToolDefinitionsResult,
  MemoryToolResult,
  OpenRpcDocument,
  OpenSessionParams,
  PeerMessageResult,
  ProposalParams,
  ProposalResult,
  ProposalsParams,
  ProposalsResult,
  ProposeAgentMemoryParams,
  ProposeAgentMemoryResult,
  PurgeAgentMemoryParams,
  PurgeAgentMemoryResult,
  RecallAgentMemoryParams,
  RecallAgentMemoryResult,
  RememberAgentMemoryParams,
  RememberAgentMemoryResult,
  ReportToolResultParams,
  RequestOptions,
  ResolveAuditVerdictParams,
  ResolveAuditVerdictResult,
  SessionCloseParams,
  SessionCloseResult,
  SessionContext,
  SessionKeyResult,
  SessionTurnResult,
  StatusResult,
  StorageDoctorParams,
  StorageDoctorResult,
  TimelineQueryParams,
  TimelineQueryResult,
  ToolResultParams,
  ToolResultResult,
  UpdateAgentMemoryParams,
  UpdateAgentMemoryResult,
} from "./types.js";

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RETRIES = 1;

interface CommonOptions {
  /** Per-request deadline (default 30 s). */
  timeoutMs?: number;
  /** Retries of an idempotent read after a connection error (default 1). Writes never retry. */
  maxRetries?: number;
}

export interface ConnectOptions extends CommonOptions {
  /** The gateway's base URL, e.g. `http://127.0.0.1:8765`. */
  url: string;
  /** Bearer token for the application surface (`POST /rpc`, `[[rpc.auth.tokens]]`). */
  token?: string;
  /** Bearer token for the console surface (`POST /console/rpc`, `[[console.auth.tokens]]`). */
  consoleToken?: string;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** A fetch implementation (default: the platform's). */
  fetch?: typeof fetch;
}

export interface SpawnOptions extends CommonOptions {
  /** The gateway's state directory (`--state-dir`). */
  stateDir: string;
  /** A TOML config file (`--config`); without it the gateway's built-in default. */
  config?: string;
  /** The executable (default `meta_gateway`, looked up on PATH). */
  command?: string;
  /** Arguments placed before `stdio` (e.g. `["-m", "meta_memory"]`-style launchers). */
  args?: string[];
  /** Arguments placed after the generated ones (e.g. `["--log-level", "warning"]`). */
  extraArgs?: string[];
  /** The child's environment (default: this process's). */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** The child's stderr: `pipe` (default; its tail is quoted when it dies), `inherit` or `ignore`. */
  stderr?: "pipe" | "inherit" | "ignore";
  /** How long to wait for the gateway's handshake line (default 60 s). */
  startTimeoutMs?: number;
  /** How long close() waits for the child to exit after closing its stdin (default 5 s). */
  closeGraceMs?: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class MetaClient {
  /** The contract version of the gateway's stdio handshake (undefined over HTTP). */
  readonly contractVersion: string | undefined;
  /** The console surface (`POST /console/rpc`, HTTP only). */
  readonly console: ConsoleSurface;
  private readonly transport: Transport;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private closed = false;

  private constructor(transport: Transport, options: CommonOptions, contractVersion?: string) {
    this.transport = transport;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.contractVersion = contractVersion;
    this.console = new ConsoleSurface(this);
    if (!(this.timeoutMs > 0)) throw new TypeError("timeoutMs must be a positive number");
    if (!(this.maxRetries >= 0)) throw new TypeError("maxRetries must be zero or more");
  }

  /** A client of a gateway served over HTTP (`meta_gateway serve`). Nothing is sent until the first call. */
  static async connect(options: ConnectOptions): Promise<MetaClient> {
    const transport = new HttpTransport({
      url: options.url,
      token: options.token,
      consoleToken: options.consoleToken,
      headers: options.headers,
      fetch: options.fetch,
    });
    return new MetaClient(transport, options);
  }

  /** Start `meta_gateway stdio --state-dir DIR [--config FILE]` and talk JSON lines to it.
   * Resolves after the gateway's handshake; a refused boot rejects with its MetaError. */
  static async spawn(options: SpawnOptions): Promise<MetaClient> {
    if (typeof options.stateDir !== "string" || options.stateDir === "") {
      throw new TypeError("stateDir is required");
    }
    const args = [
      ...(options.args ?? []),
      "stdio",
      "--state-dir",
      options.stateDir,
      ...(options.config !== undefined ? ["--config", options.config] : []),
      ...(options.extraArgs ?? []),
    ];
    const transport = await StdioTransport.start({
      command: options.command ?? "meta_gateway",
      args,
      env: options.env,
      cwd: options.cwd,
      stderr: options.stderr,
      startTimeoutMs: options.startTimeoutMs ?? 60_000,
      closeGraceMs: options.closeGraceMs ?? 5_000,
    });
    const version = transport.handshake.contract_version;
    return new MetaClient(transport, options, typeof version === "string" ? version : undefined);
  }

  /** The child's process id (stdio only). */
  get pid(): number | undefined {
    return this.transport instanceof StdioTransport ? this.transport.pid : undefined;
  }

  /**
   * Any JSON-RPC method, raw: `params` is sent exactly as given (snake_case wire keys) and the
   * wire result is returned as is. Retried once on a connection error only for the idempotent
   * reads of the method table.
   */
  async call<T = unknown>(method: string, params?: unknown, options?: RequestOptions): Promise<T> {
    return (await this.send("sdk", method, params, methodSpec(method), options)) as T;
  }

  /** @internal Send with the retry policy of `spec`. */
  async send(
    surface: Surface,
    method: string,
    params: unknown,
    spec: MethodSpec | undefined,
    options: RequestOptions = {},
  ): Promise<unknown> {
    if (this.closed) throw new MetaConnectionError(`${method}: the client is closed`, { method });
    const retries = spec?.idempotent === true ? this.maxRetries : 0;
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.transport.send(surface, method, params, { timeoutMs, signal: options.signal });
      } catch (err) {
        if (!(err instanceof MetaConnectionError) || attempt >= retries || this.closed) throw err;
        await sleep(Math.min(100 * 2 ** attempt, 1000));
      }
    }
  }

  /** @internal A wrapped method: camelCase params out, camelCase result back. */
  async request<M extends WireMethod>(
    method: M,
    params: ParamsOf<M> | undefined,
    options?: RequestOptions,
    surface: Surface = "sdk",
  ): Promise<unknown> {
    const spec = methodSpec(method) as MethodSpec;
    const wire = params === undefined ? undefined : toWire(params, spec.opaqueParams);
    return fromWire(await this.send(surface, method, wire, spec, options), spec.opaqueResult);
  }

  // -- agent memory ------------------------------------------------------------------------------

  async rememberAgentMemory(
    params: RememberAgentMemoryParams,
    options?: RequestOptions,
  ): Promise<RememberAgentMemoryResult> {
    return (await this.request("meta/agent_memory/remember", params, options)) as RememberAgentMemoryResult;
  }

  async recallAgentMemory(params: RecallAgentMemoryParams, options?: RequestOptions): Promise<RecallAgentMemoryResult> {
    return (await this.request("meta/agent_memory/recall", params, options)) as RecallAgentMemoryResult;
  }

  async updateAgentMemory(params: UpdateAgentMemoryParams, options?: RequestOptions): Promise<UpdateAgentMemoryResult> {
    return (await this.request("meta/agent_memory/update", params, options)) as UpdateAgentMemoryResult;
  }

  async forgetAgentMemory(params: ForgetAgentMemoryParams, options?: RequestOptions): Promise<ForgetAgentMemoryResult> {
    return (await this.request("meta/agent_memory/forget", params, options)) as ForgetAgentMemoryResult;
  }

  async listAgentMemory(params: ListAgentMemoryParams, options?: RequestOptions): Promise<ListAgentMemoryResult> {
    return (await this.request("meta/agent_memory/list", params, options)) as ListAgentMemoryResult;
  }

  async getAgentMemory(params: GetAgentMemoryParams, options?: RequestOptions): Promise<GetAgentMemoryResult> {
    return (await this.request("meta/agent_memory/get", params, options)) as GetAgentMemoryResult;
  }

  /** A record's lineage, oldest first, each version with the reason it ended. */
  async agentMemoryHistory(
    params: GetAgentMemoryParams,
    options?: RequestOptions,
  ): Promise<AgentMemoryHistoryResult> {
    return (await this.request("meta/agent_memory/history", params, options)) as AgentMemoryHistoryResult;
  }

  /** Erase for real a record's whole lineage (`memoryId`, or several: `memoryIds`) or everything
   * of the identity (`all: true`): no file or table keeps the text. Returns the receipt: ids and
   * content hashes, never content. Never retried. */
  async purgeAgentMemory(params: PurgeAgentMemoryParams, options?: RequestOptions): Promise<PurgeAgentMemoryResult> {
    return (await this.request("meta/agent_memory/purge", params, options)) as PurgeAgentMemoryResult;
  }

  /** Queue a proposal for a mob's or an operator's memory, for an operator to accept or reject on
   * the console (authored by the application, never tainted). */
  async proposeAgentMemory(
    params: ProposeAgentMemoryParams,
    options?: RequestOptions,
  ): Promise<ProposeAgentMemoryResult> {
    return (await this.request("meta/agent_memory/propose", params, options)) as ProposeAgentMemoryResult;
  }

  // -- the assertion ledger ----------------------------------------------------------------------

  async memoryIndex(params: MemoryIndexParams, options?: RequestOptions): Promise<MemoryIndexResult> {
    return (await this.request("meta/memory/index", params, options)) as MemoryIndexResult;
  }

  async memoryQuery(params: MemoryQueryParams = {}, options?: RequestOptions): Promise<MemoryQueryResult> {
    return (await this.request("meta/memory/query", params, options)) as MemoryQueryResult;
  }

  async memoryStores(options?: RequestOptions): Promise<MemoryStoresResult> {
    return (await this.request("meta/memory/stores", {}, options)) as MemoryStoresResult;
  }

  // -- host sessions -----------------------------------------------------------------------------

  /** Open a host session for an identity (a fresh, clean context). */
  async openSession(params: OpenSessionParams, options?: RequestOptions): Promise<Session> {
    const { sessionKey } = (await this.request("meta/session/open", params, options)) as SessionKeyResult;
    return new Session(this, sessionKey, params.identity);
  }

  /** Report a tool result for an identity that has no session yet (held as pending taint). */
  async toolResult(params: ReportToolResultParams, options?: RequestOptions): Promise<ToolResultResult> {
    return (await this.request("meta/session/tool_result", params, options)) as ToolResultResult;
  }

  /** The `memory` tool for the LLM, in a provider's shape; empty when the recorder tool is off. */
  async memoryToolDefinitions(
    params: MemoryToolDefinitionsParams = {},
    options?: RequestOptions,
  ): Promise<MemoryToolDefinitionsResult> {
    return (await this.request("meta/session/tool_definitions", params, options)) as MemoryToolDefinitionsResult;
  }

  // -- gating ------------------------------------------------------------------------------------

  async evaluateGating(params: EvaluateGatingParams, options?: RequestOptions): Promise<EvaluateGatingResult> {
    return (await this.request("meta/gating/evaluate", params, options)) as EvaluateGatingResult;
  }

  async decideGating(params: DecideGatingParams, options?: RequestOptions): Promise<DecideGatingResult> {
    return (await this.request("meta/gating/decide", params, options)) as DecideGatingResult;
  }

  async gatingPending(options?: RequestOptions): Promise<GatingPendingResult> {
    return (await this.request("meta/gating/pending", {}, options)) as GatingPendingResult;
  }

  async gatingAudit(params: GatingAuditParams = {}, options?: RequestOptions): Promise<GatingAuditResult> {
    return (await this.request("meta/gating/audit", params, options)) as GatingAuditResult;
  }

  // -- timeline, runtime -------------------------------------------------------------------------

  async timelineQuery(params: TimelineQueryParams = {}, options?: RequestOptions): Promise<TimelineQueryResult> {
    return (await this.request("meta/timeline/query", params, options)) as TimelineQueryResult;
  }

  async status(options?: RequestOptions): Promise<StatusResult> {
    return (await this.request("meta/status", {}, options)) as StatusResult;
  }

  async capabilities(options?: RequestOptions): Promise<CapabilitiesResult> {
    return (await this.request("meta/capabilities", {}, options)) as CapabilitiesResult;
  }

  async storageDoctor(params: StorageDoctorParams, options?: RequestOptions): Promise<StorageDoctorResult> {
    return (await this.request("meta/storage/doctor", params, options)) as StorageDoctorResult;
  }

  /** The gateway's OpenRPC document (`rpc.discover`), exactly as sent. */
  async discover(options?: RequestOptions): Promise<OpenRpcDocument> {
    return (await this.request("rpc.discover", undefined, options)) as OpenRpcDocument;
  }

  /** End the client: over stdio, close the child's stdin, wait for it to exit (then SIGTERM,
   * then SIGKILL). Calls made afterwards reject with MetaConnectionError. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.transport.close();
  }
}

/** A host session, bound to one session key (like the Python `Session`). `reset()` moves it to
 * the new, clean key. Session calls are never retried: they spend the session's budget. */
export class Session {
  private readonly client: MetaClient;
  /** The current session key. */
  key: string;
  readonly identity: string;

  constructor(client: MetaClient, key: string, identity: string) {
    this.client = client;
    this.key = key;
    this.identity = identity;
  }

  /** The memory block for a new context's system prompt. */
  async buildContext(options?: RequestOptions): Promise<SessionContext> {
    return (await this.client.request(
      "meta/session/build_context",
      { sessionKey: this.key },
      options,
    )) as SessionContext;
  }

  /** Wrap a user message: the memory block plus the defanged message. */
  async turn(message: string, options?: RequestOptions): Promise<SessionTurnResult> {
    return (await this.client.request(
      "meta/session/turn",
      { sessionKey: this.key, message },
      options,
    )) as SessionTurnResult;
  }

  /** Report a tool result before the LLM request that consumes it. */
  async toolResult(params: ToolResultParams, options?: RequestOptions): Promise<ToolResultResult> {
    return (await this.client.request(
      "meta/session/tool_result",
      { ...params, sessionKey: this.key },
      options,
    )) as ToolResultResult;
  }

  /** Report a message the host delivered from another agent's session into this one, before the
   * LLM reads it: a tainted sender (or one the gateway cannot vouch for) taints this session. */
  async peerMessage(senderSessionKey: string, options?: RequestOptions): Promise<PeerMessageResult> {
    return (await this.client.request(
      "meta/session/peer_message",
      { sessionKey: this.key, senderSessionKey },
      options,
    )) as PeerMessageResult;
  }

  /** Run the LLM's `memory` tool call; bad arguments come back as `isError` content. */
  async memoryTool(args: MemoryToolArguments, options?: RequestOptions): Promise<MemoryToolResult> {
    return (await this.client.request(
      "meta/session/memory_tool",
      { sessionKey: this.key, arguments: args },
      options,
    )) as MemoryToolResult;
  }

  /** A fresh context: a new clean session key (taint cleared); returns it. */
  async reset(options?: RequestOptions): Promise<SessionKeyResult> {
    const result = (await this.client.request(
      "meta/session/reset",
      { sessionKey: this.key },
      options,
    )) as SessionKeyResult;
    this.key = result.sessionKey;
    return result;
  }

  /** The host compacted its context: the injection budget restarts (taint stays). */
  async compact(options?: RequestOptions): Promise<SessionKeyResult> {
    return (await this.client.request("meta/session/compact", { sessionKey: this.key }, options)) as SessionKeyResult;
  }

  /** End the session. With a retirement `cause` and the steward on, an exit-interview harvest of
   * the identity is queued for the steward's next dream (`harvest: "queued"`). */
  async close(params: SessionCloseParams = {}, options?: RequestOptions): Promise<SessionCloseResult> {
    return (await this.client.request(
      "meta/session/close",
      { ...params, sessionKey: this.key },
      options,
    )) as SessionCloseResult;
  }
}

/** The console surface over HTTP (`POST /console/rpc` with the `consoleToken`). */
export class ConsoleSurface {
  private readonly client: MetaClient;

  constructor(client: MetaClient) {
    this.client = client;
  }

  /** Any console method, raw (snake_case wire params and result). Never retried. */
  async call<T = unknown>(method: string, params?: unknown, options?: RequestOptions): Promise<T> {
    return (await this.client.send("console", method, params, undefined, options)) as T;
  }

  async capabilities(options?: RequestOptions): Promise<CapabilitiesResult> {
    return (await this.client.request("meta/capabilities", {}, options, "console")) as CapabilitiesResult;
  }

  async status(options?: RequestOptions): Promise<StatusResult> {
    return (await this.client.request("meta/status", {}, options, "console")) as StatusResult;
  }

  async discover(options?: RequestOptions): Promise<OpenRpcDocument> {
    return (await this.client.request("rpc.discover", undefined, options, "console")) as OpenRpcDocument;
  }

  /** The open proposals (pending, or held by a dream), without their bodies. */
  async proposals(params: ProposalsParams = {}, options?: RequestOptions): Promise<ProposalsResult> {
    return (await this.client.request("meta/memory/panel/proposals", params, options, "console")) as ProposalsResult;
  }

  /** One proposal with its body and the content hash a decision is bound to. */
  async proposal(params: ProposalParams, options?: RequestOptions): Promise<ProposalResult> {
    return (await this.client.request("meta/memory/panel/proposal", params, options, "console")) as ProposalResult;
  }

  /** Accept or reject a proposal, bound to the content hash read; the console token's subject is
   * recorded as the reviewer. Never retried: a write. */
  async decideProposal(params: DecideProposalParams, options?: RequestOptions): Promise<DecideProposalResult> {
    return (await this.client.request(
      "meta/memory/proposals/decide",
      params,
      options,
      "console",
    )) as DecideProposalResult;
  }

  /** Resolve a usage-audit verdict of the steward's (`meta/memory/panel/audit_verdicts` lists the
   * open ones): `acknowledge` it, or `tombstone` the record of a `dead_weight` one (bound to the
   * content hash read). Never retried: a write. */
  async resolveAuditVerdict(
    params: ResolveAuditVerdictParams,
    options?: RequestOptions,
  ): Promise<ResolveAuditVerdictResult> {
    return (await this.client.request(
      "meta/memory/audit_verdicts/resolve",
      params,
      options,
      "console",
    )) as ResolveAuditVerdictResult;
  }
}

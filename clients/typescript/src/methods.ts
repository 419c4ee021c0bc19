/**
 * The method table: every wire method the client calls, the snake_case param keys it can send,
 * whether a call may be retried (idempotent reads only), and which paths are opaque.
 *
 * Two checks keep this table honest:
 * - at compile time (below), each method's params interface, converted to snake_case, must have
 *   exactly the keys listed here: adding a field to an interface without listing it (or the
 *   reverse) fails `tsc`;
 * - at test time (test/openrpc.test.ts), every method and every key listed here must be declared
 *   in the gateway's own OpenRPC document (`rpc.discover`).
 */

import type {
  DecideGatingParams,
  DecideProposalParams,
  EvaluateGatingParams,
  ForgetAgentMemoryParams,
  GatingAuditParams,
  GetAgentMemoryParams,
  ListAgentMemoryParams,
  MemoryIndexParams,
  MemoryQueryParams,
  MemoryToolArguments,
  MemoryToolDefinitionsParams,
  OpenSessionParams,
  ProposalParams,
  ProposalsParams,
  ProposeAgentMemoryParams,
  PurgeAgentMemoryParams,
  RecallAgentMemoryParams,
  ResolveAuditVerdictParams,
  SessionCloseParams,
  RememberAgentMemoryParams,
  StorageDoctorParams,
  TimelineQueryParams,
  ToolResultParams,
  UpdateAgentMemoryParams,
} from "./types.js";

export interface MethodSpec {
  /** Every snake_case key the client can send. */
  readonly params: readonly string[];
  /** The keys the client always sends (required in the params interface). */
  readonly required: readonly string[];
  /** An idempotent read: retried once on a connection error. Writes never are. */
  readonly idempotent: boolean;
  /** Wire paths in params sent exactly as given (see case.ts). */
  readonly opaqueParams?: readonly string[];
  /** Wire paths in results returned exactly as received. */
  readonly opaqueResult?: readonly string[];
  /** A console method (`POST /console/rpc`); the others are the application surface's. */
  readonly surface?: "console";
}

export const METHODS = {
  // agent memory
  "meta/agent_memory/remember": {
    params: ["identity", "scope", "title", "body", "tags", "realm", "expires_at_ms", "ttl_ms"],
    required: ["title", "body"],
    idempotent: false,
  },
  "meta/agent_memory/recall": {
    params: [
      "identity",
      "query_text",
      "query_terms",
      "max_entries",
      "selection",
      "realm",
      "tags",
      "scopes",
      "wait_for_vectors",
      "min_score",
    ],
    required: ["identity"],
    idempotent: true,
  },
  "meta/agent_memory/update": {
    params: ["identity", "scope", "memory_id", "title", "body", "tags", "realm", "expires_at_ms", "ttl_ms"],
    required: ["memory_id", "title", "body"],
    idempotent: false,
  },
  "meta/agent_memory/forget": {
    params: ["identity", "scope", "memory_id", "realm"],
    required: ["memory_id"],
    idempotent: false,
  },
  "meta/agent_memory/list": {
    params: [
      "identity",
      "realm",
      "status",
      "kind",
      "tags_any",
      "tags_all",
      "created_after_ms",
      "created_before_ms",
      "updated_after_ms",
      "updated_before_ms",
      "limit",
      "cursor",
    ],
    required: ["identity"],
    idempotent: true,
  },
  "meta/agent_memory/get": {
    params: ["identity", "memory_id", "realm"],
    required: ["identity", "memory_id"],
    idempotent: true,
  },
  "meta/agent_memory/history": {
    params: ["identity", "memory_id", "realm"],
    required: ["identity", "memory_id"],
    idempotent: true,
  },
  // Erasure for real: a write, never retried.
  "meta/agent_memory/purge": {
    params: ["identity", "memory_id", "memory_ids", "all", "realm"],
    required: ["identity"],
    idempotent: false,
  },
  "meta/agent_memory/propose": {
    params: ["realm", "scope", "title", "body", "description", "tags", "kind"],
    required: ["scope", "title", "body"],
    idempotent: false,
  },
  // the assertion ledger
  "meta/memory/index": {
    params: ["entity", "topic", "store", "fact", "metadata", "conflict", "conflict_reason"],
    required: ["entity", "topic"],
    idempotent: false,
    opaqueParams: ["metadata"],
  },
  "meta/memory/query": {
    params: ["entity", "topic", "store", "query"],
    required: [],
    idempotent: true,
    opaqueResult: ["assertions.*.metadata"],
  },
  "meta/memory/stores": { params: [], required: [], idempotent: true },
  // host sessions (not idempotent: context and turns spend the session's injection budget)
  "meta/session/open": { params: ["identity", "realm", "mob"], required: ["identity"], idempotent: false },
  "meta/session/build_context": { params: ["session_key"], required: ["session_key"], idempotent: false },
  "meta/session/turn": { params: ["session_key", "message"], required: ["session_key", "message"], idempotent: false },
  "meta/session/tool_result": {
    params: ["session_key", "identity", "realm", "tool_name", "provenance", "server_tool", "is_error"],
    required: ["tool_name"],
    idempotent: false,
    opaqueParams: ["provenance"],
  },
  "meta/session/memory_tool": {
    params: ["session_key", "arguments"],
    required: ["session_key", "arguments"],
    idempotent: false,
    opaqueParams: ["arguments"],
  },
  "meta/session/peer_message": {
    params: ["session_key", "sender_session_key"],
    required: ["session_key", "sender_session_key"],
    idempotent: false,
  },
  "meta/session/reset": { params: ["session_key"], required: ["session_key"], idempotent: false },
  "meta/session/compact": { params: ["session_key"], required: ["session_key"], idempotent: false },
  "meta/session/close": { params: ["session_key", "cause"], required: ["session_key"], idempotent: false },
  "meta/session/tool_definitions": { params: ["format"], required: [], idempotent: true, opaqueResult: ["tools"] },
  // gating
  "meta/gating/evaluate": {
    params: [
      "action",
      "actor_id",
      "risk_tier",
      "rationale",
      "requested_approver",
      "approval_recipient",
      "approval_channel",
      "approval_timeout_ms",
      "entity",
      "topic",
    ],
    required: ["action", "actor_id", "risk_tier"],
    idempotent: false,
  },
  "meta/gating/decide": {
    params: ["pending_id", "approver_id", "decision", "reason"],
    required: ["pending_id", "approver_id", "decision"],
    idempotent: false,
  },
  "meta/gating/pending": { params: [], required: [], idempotent: true },
  "meta/gating/audit": { params: ["limit"], required: [], idempotent: true, opaqueResult: ["entries.*.detail"] },
  // timeline, runtime
  "meta/timeline/query": {
    params: ["after", "limit"],
    required: [],
    idempotent: true,
    opaqueResult: ["events.*.data"],
  },
  "meta/status": { params: [], required: [], idempotent: true },
  "meta/capabilities": { params: [], required: [], idempotent: true },
  "meta/storage/doctor": { params: ["state_dir", "identity"], required: ["state_dir"], idempotent: true },
  "rpc.discover": { params: [], required: [], idempotent: true, opaqueResult: [""] },
  // the console surface
  "meta/memory/panel/proposals": { params: ["realm", "limit"], required: [], idempotent: true, surface: "console" },
  "meta/memory/panel/proposal": {
    params: ["proposal_id", "realm"],
    required: ["proposal_id"],
    idempotent: true,
    surface: "console",
  },
  "meta/memory/proposals/decide": {
    params: ["realm", "proposal_id", "verdict", "expected_content_hash", "rationale"],
    required: ["proposal_id", "verdict", "expected_content_hash"],
    idempotent: false,
    surface: "console",
    // The decision as its audit row holds it: the same bytes on every replay.
    opaqueResult: ["decision.review"],
  },
  "meta/memory/audit_verdicts/resolve": {
    params: ["realm", "run_id", "record_id", "action", "expected_content_hash", "rationale"],
    required: ["run_id", "record_id", "action"],
    idempotent: false,
    surface: "console",
  },
} as const satisfies Record<string, MethodSpec>;

export type WireMethod = keyof typeof METHODS;

export function methodSpec(method: string): MethodSpec | undefined {
  return Object.prototype.hasOwnProperty.call(METHODS, method)
    ? (METHODS as Record<string, MethodSpec>)[method]
    : undefined;
}

// -- the compile-time check: interfaces and table agree -------------------------------------------

type CamelToSnake<S extends string> = S extends `${infer C}${infer Rest}`
  ? `${C extends Lowercase<C> ? C : `_${Lowercase<C>}`}${CamelToSnake<Rest>}`
  : S;
type WireKeys<P> = CamelToSnake<keyof P & string>;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type RequiredKeys<P> = { [K in keyof P]-?: Record<never, never> extends Pick<P, K> ? never : K }[keyof P];
type SessionBound<P> = P & { sessionKey: string };
type None = Record<never, never>;

/** The params object the client sends for each method, before key conversion. */
interface ParamsByMethod {
  "meta/agent_memory/remember": RememberAgentMemoryParams;
  "meta/agent_memory/recall": RecallAgentMemoryParams;
  "meta/agent_memory/update": UpdateAgentMemoryParams;
  "meta/agent_memory/forget": ForgetAgentMemoryParams;
  "meta/agent_memory/list": ListAgentMemoryParams;
  "meta/agent_memory/get": GetAgentMemoryParams;
  "meta/agent_memory/history": GetAgentMemoryParams;
  "meta/agent_memory/purge": PurgeAgentMemoryParams;
  "meta/memory/index": MemoryIndexParams;
  "meta/memory/query": MemoryQueryParams;
  "meta/memory/stores": None;
  "meta/session/open": OpenSessionParams;
  "meta/session/build_context": SessionBound<None>;
  "meta/session/turn": SessionBound<{ message: string }>;
  "meta/session/tool_result": ToolResultParams & { sessionKey?: string; identity?: string; realm?: string };
  "meta/session/peer_message": SessionBound<{ senderSessionKey: string }>;
  "meta/session/memory_tool": SessionBound<{ arguments: MemoryToolArguments }>;
  "meta/session/reset": SessionBound<None>;
  "meta/session/compact": SessionBound<None>;
  "meta/session/close": SessionBound<SessionCloseParams>;
  "meta/session/tool_definitions": MemoryToolDefinitionsParams;
  "meta/gating/evaluate": EvaluateGatingParams;
  "meta/gating/decide": DecideGatingParams;
  "meta/gating/pending": None;
  "meta/gating/audit": GatingAuditParams;
  "meta/timeline/query": TimelineQueryParams;
  "meta/status": None;
  "meta/capabilities": None;
  "meta/storage/doctor": StorageDoctorParams;
  "rpc.discover": None;
  "meta/memory/audit_verdicts/resolve": ResolveAuditVerdictParams;
  "meta/agent_memory/propose": ProposeAgentMemoryParams;
  "meta/memory/panel/proposals": ProposalsParams;
  "meta/memory/panel/proposal": ProposalParams;
  "meta/memory/proposals/decide": DecideProposalParams;
}

export type ParamsOf<M extends WireMethod> = ParamsByMethod[M];

type Mismatched = {
  [M in WireMethod]: Same<WireKeys<ParamsByMethod[M]>, (typeof METHODS)[M]["params"][number]> extends true
    ? Same<CamelToSnake<RequiredKeys<ParamsByMethod[M]> & string>, (typeof METHODS)[M]["required"][number]> extends true
      ? never
      : M
    : M;
}[WireMethod];
type Unlisted = Exclude<keyof ParamsByMethod, WireMethod>;

// If tsc reports an error on one of these two lines, the name in the message is a method whose
// params interface and METHODS entry disagree (or a method missing from METHODS).
export const tableMatchesInterfaces: [Mismatched] extends [never] ? true : Mismatched = true;
export const everyMethodListed: [Unlisted] extends [never] ? true : Unlisted = true;

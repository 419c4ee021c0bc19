/**
 * Params and results of every method the client wraps, in the client's camelCase.
 *
 * Fields marked OPAQUE are user or third-party data: the client sends and returns them exactly
 * as they are, without renaming keys (see case.ts and the `opaqueParams` / `opaqueResult`
 * columns of methods.ts).
 */

// -- per-request options -----------------------------------------------------------------------

export interface RequestOptions {
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number;
  /** Aborts the call (the promise rejects with the signal's reason). */
  signal?: AbortSignal;
}

// -- agent memory ------------------------------------------------------------------------------

/** A record as `meta/agent_memory/remember` and `recall` return it. */
export type ScopeKind = "identity" | "mob" | "operator" | "realm";

export interface AgentMemoryRecord {
  memoryId: string;
  title: string;
  body: string;
  tags: string[];
  createdAtMs: number;
  updatedAtMs: number;
  /** The scope it lives in: the identity's own, or one the identity shares. */
  scopeKind: ScopeKind;
  /** The identity, mob or operator of that scope ("" for the realm scope). */
  scopeKey: string;
  /** A contextual recall's score for it, 0 to 1, never rising down the list (null for `always`
   * recall; absent outside recall). */
  score?: number | null;
  /** When it expires (Unix ms): absent (or null on `list` and `get`) when it never does. */
  expiresAtMs?: number | null;
}

/** A shared scope to write instead of an identity's own (`{kind: "mob", key: "crew"}`). */
export interface MemoryScope {
  kind: ScopeKind;
  key?: string;
}

export type Selection = "always" | "contextual";

export interface RememberAgentMemoryParams {
  /** Whose memory; leave it out when `scope` names a shared scope. */
  identity?: string;
  scope?: MemoryScope;
  title: string;
  body: string;
  tags?: string[];
  realm?: string;
  /** Expire at this Unix ms (in the future): never recalled or injected afterwards, listed as
   * `expired`, deleted by the upkeep. Exclusive with `ttlMs`. */
  expiresAtMs?: number;
  /** Or: expire this many milliseconds after the write. */
  ttlMs?: number;
}
export type RememberAgentMemoryResult = AgentMemoryRecord;

export interface RecallAgentMemoryParams {
  identity: string;
  queryText?: string;
  queryTerms?: string[];
  /** 1..64; the gateway's default (8) when absent. */
  maxEntries?: number;
  selection?: Selection;
  realm?: string;
  /** Only records carrying one of these tags (newer gateways). */
  tags?: string[];
  /** Only these kinds of the identity's scopes (default: its own and every shared one it reads). */
  scopes?: ScopeKind[];
  /** With `recall = "hybrid"`: wait (at most `recall_timeout_ms`) until the vectors cover every
   * record acknowledged before the call. */
  waitForVectors?: boolean;
  /** Only records scoring at least this, 0 to 1 (contextual recall only). */
  minScore?: number;
}
export interface RecallAgentMemoryResult {
  records: AgentMemoryRecord[];
  /** Whether the vectors this recall ranked by missed records acknowledged before it; null for
   * lexical recall (no vectors). */
  vectorsBehind: boolean | null;
}

export interface UpdateAgentMemoryParams {
  identity?: string;
  scope?: MemoryScope;
  memoryId: string;
  title: string;
  body: string;
  tags?: string[];
  realm?: string;
  /** The new version's expiry (Unix ms); absent keeps the replaced version's, null removes it. */
  expiresAtMs?: number | null;
  /** Or: expire this many milliseconds after the update. */
  ttlMs?: number;
}
export interface UpdateAgentMemoryResult {
  /** The id of the new version. */
  memoryId: string;
  /** The id of the version it replaced. */
  supersedes: string;
}

export interface ForgetAgentMemoryParams {
  identity?: string;
  scope?: MemoryScope;
  memoryId: string;
  realm?: string;
}
export interface ForgetAgentMemoryResult {
  memoryId: string;
  /** false when the record was absent, already forgotten or another identity's. */
  deleted: boolean;
}

/** `expired`: active, and its `expiresAtMs` has come (never recalled; the upkeep deletes it). */
export type MemoryRecordStatus = "active" | "expired" | "quarantined" | "superseded" | "tombstoned";
export type MemoryRecordKind =
  "preference" | "fact" | "gotcha" | "procedure" | "relationship" | "open_loop" | "reference";

export interface ListAgentMemoryParams {
  identity: string;
  realm?: string;
  /** Default `active` (not expired); `expired`: active records whose expiry has come; `any`: every status. */
  status?: MemoryRecordStatus | "any";
  kind?: MemoryRecordKind;
  /** Records carrying at least one of these tags. */
  tagsAny?: string[];
  /** Records carrying every one of these tags. */
  tagsAll?: string[];
  /** Unix ms, inclusive. */
  createdAfterMs?: number;
  /** Unix ms, exclusive. */
  createdBeforeMs?: number;
  updatedAfterMs?: number;
  updatedBeforeMs?: number;
  /** 1..200, default 50. */
  limit?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
}

/** A record as `meta/agent_memory/list` and `get` return it: the API record plus what managing
 * it needs. */
export interface ManagedAgentMemoryRecord extends AgentMemoryRecord {
  realm: string;
  kind: MemoryRecordKind;
  description?: string;
  status: MemoryRecordStatus;
  quarantineReason?: string | null;
  trust: string;
  /** Who wrote it: `{author: "application" | "operator" | "agent" | ..., identity?, runId?}`. */
  author: { author: string; identity?: string; runId?: string; [field: string]: unknown };
  supersedes?: string | null;
  supersededBy?: string | null;
  derivedFrom?: string[];
  everQuarantined?: boolean;
  contentHash?: string;
}
export interface ListAgentMemoryResult {
  realm: string;
  /** Newest updated first. */
  records: ManagedAgentMemoryRecord[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

export interface GetAgentMemoryParams {
  identity: string;
  memoryId: string;
  realm?: string;
}
export interface GetAgentMemoryResult {
  realm: string;
  record: ManagedAgentMemoryRecord;
  /** The current successor's id when the record was superseded or released, else null. */
  successor: string | null;
}

/** One version of a record's lineage (`meta/agent_memory/history`). */
export interface AgentMemoryVersion extends Omit<ManagedAgentMemoryRecord, "title" | "body" | "tags" | "description"> {
  /** null when `contentWithheld`. */
  title: string | null;
  body: string | null;
  tags: string[] | null;
  description?: string | null;
  /** Why it ended; null while it is current. */
  ended: "superseded" | "released" | "discarded" | "forgotten" | "expired" | null;
  /** Quarantined content the caller may not read (the console without memory.quarantine.review). */
  contentWithheld: boolean;
}
export interface AgentMemoryHistoryResult {
  realm: string;
  memoryId: string;
  /** Oldest first; the last is the current one. */
  versions: AgentMemoryVersion[];
}

/** `meta/agent_memory/purge`: exactly one of `memoryId`, `memoryIds` and `all: true` (the gateway
 * refuses none or several with -32602). A purge of a whole identity is asked for by name, never by
 * leaving the ids out. */
export interface PurgeAgentMemoryParams {
  identity: string;
  /** Purge this record and its whole lineage (its versions, released successors, quarantined
   * originals, promoted copies). */
  memoryId?: string;
  /** Purge these records (1..1000 ids) and their lineages, in one purge. */
  memoryIds?: string[];
  /** true: purge everything of the identity in the realm. */
  all?: boolean;
  realm?: string;
}
/** What a purge erases, as the handle takes it: one record's lineage, several, or everything of
 * the identity. */
export type PurgeAgentMemoryTarget = { memoryId: string } | { memoryIds: string[] } | { all: true };
/** One record a purge erased: its id and content hash, never its content. */
export interface PurgedAgentMemory {
  memoryId: string;
  /** The purged content's sha256 (64 hex), as the record held it. */
  contentHash: string;
  /** Its status when it was purged. */
  status: MemoryRecordStatus;
  scope: { kind: ScopeKind; key: string };
}
/** The receipt of a purge (kept as the realm's `purge` audit row). */
export interface PurgeAgentMemoryResult {
  /** null when the realm does not exist (nothing was there, nothing was written). */
  receiptId: string | null;
  realm: string;
  identity: string;
  /** The records asked for; null for a purge of the whole identity. */
  memoryIds: string[] | null;
  purgedAtMs: number;
  /** Who purged: `kind` (`application`, `console`, `cli`) and the authenticated `principal`
   * (null on the local channel). */
  by: { kind: "application" | "console" | "cli"; principal: string | null };
  /** Every record erased. */
  records: PurgedAgentMemory[];
  /** How many rows of each other kind the purge deleted. */
  removed: {
    auditRows: number;
    injections: number;
    proposals: number;
    promotions: number;
    harvests: number;
    sessions: number;
    verdicts: number;
    vectors: number;
    events: number;
  };
}

// -- the assertion ledger ----------------------------------------------------------------------

export type LedgerStore = "knowledge_graph" | "vector" | "timeline" | "todo" | "top_of_mind";

export interface MemoryIndexParams {
  entity: string;
  topic: string;
  /** Default `knowledge_graph`. */
  store?: LedgerStore;
  /** Required unless `conflict` is true. */
  fact?: string;
  /** OPAQUE: stored and returned as given. */
  metadata?: Record<string, unknown>;
  conflict?: boolean;
  conflictReason?: string;
}
export interface MemoryIndexResult {
  entity: string;
  topic: string;
  store: LedgerStore;
  assertionId: string | null;
  conflictActive: boolean;
}

export interface MemoryQueryParams {
  entity?: string;
  topic?: string;
  store?: LedgerStore;
  /** Case-insensitive substring filter over entity, topic and fact. */
  query?: string;
}
export interface Assertion {
  assertionId: string;
  entity: string;
  topic: string;
  store: LedgerStore;
  fact: string;
  /** OPAQUE: exactly as indexed. */
  metadata: Record<string, unknown> | null;
  indexedAtMs: number;
}
export interface ConflictSignal {
  entity: string;
  topic: string;
  store: LedgerStore;
  reason: string | null;
  updatedAtMs: number;
}
export interface MemoryQueryResult {
  assertions: Assertion[];
  conflicts: ConflictSignal[];
}

export interface MemoryStoreInfo {
  store: LedgerStore;
  recordCount: number;
}
export interface MemoryStoresResult {
  stores: MemoryStoreInfo[];
}

// -- host sessions and the memory tool ---------------------------------------------------------

export interface OpenSessionParams {
  identity: string;
  realm?: string;
  mob?: string;
}

export interface SessionContext {
  /** The memory block for the system prompt; null when there is nothing to inject. */
  text: string | null;
  /** Ids of the records injected. */
  injected: string[];
}

export interface SessionTurnResult {
  /** The memory block plus the (defanged) user message, ready to send to the LLM. */
  text: string;
  injected: string[];
}

/** OPAQUE: a tool's provenance as the tool catalog has it, sent as given (wire keys). */
export interface ToolProvenance {
  kind: string;
  source_id?: string | null;
}

export interface ToolResultParams {
  toolName: string;
  provenance?: ToolProvenance;
  /** A provider-native server tool (always untrusted). */
  serverTool?: boolean;
  isError?: boolean;
}

/** A tool result reported for an identity before the host opened a session: it taints the
 * identity's open sessions in the realm, else it is held as pending taint for its next one. */
export interface ReportToolResultParams extends ToolResultParams {
  identity: string;
  /** Default: the gateway's `[agent_memory] realm`. */
  realm?: string;
}

export interface PeerMessageResult {
  /** Whether the receiving session is tainted now. */
  tainted: boolean;
}

export interface ToolResultResult {
  trusted: boolean;
  tainted: boolean;
}

/** OPAQUE: the LLM's `memory` tool call arguments, an object or its JSON text. */
export type MemoryToolArguments = Record<string, unknown> | string;

export interface MemoryToolResult {
  /** What to hand back to the LLM as the tool result. */
  content: string;
  isError: boolean;
  outcome: "stored" | "quarantined" | "none";
}

export interface SessionKeyResult {
  sessionKey: string;
}

/** Why a session ends for good: the identity leaves the fleet, or goes on as a fresh instance. */
export type RetirementCause = "retired" | "respawned";

export interface SessionCloseParams {
  /** With the steward on, queues an exit-interview harvest of the identity for its next dream. */
  cause?: RetirementCause;
}

export interface SessionCloseResult {
  closed: boolean;
  /** With a `cause`: `queued`, or `steward_disabled` (nothing queued); null without one. */
  harvest: "queued" | "steward_disabled" | null;
}

export type AuditVerdictAction = "acknowledge" | "tombstone";

/** `meta/memory/audit_verdicts/resolve` (console): an operator's answer to a usage-audit verdict. */
export interface ResolveAuditVerdictParams {
  runId: string;
  recordId: string;
  /** `acknowledge` closes it, the record unchanged; `tombstone` acts on a `dead_weight` verdict. */
  action: AuditVerdictAction;
  /** The record's content hash as read; required to tombstone. */
  expectedContentHash?: string;
  realm?: string;
  rationale?: string;
}

export interface ResolveAuditVerdictResult {
  outcome: "acknowledged" | "tombstoned" | "already_acknowledged" | "already_tombstoned";
  verdict: {
    realm: string;
    runId: string;
    recordId: string;
    verdict: "load_bearing" | "dead_weight";
    rationale: string | null;
    createdAtMs: number;
    status: "acknowledged" | "tombstoned";
  };
  /** The record as it stands now (no body), or null when it is gone. */
  record: Record<string, unknown> | null;
  /** The resolution as audited: its audit token, when, and what was decided by whom. */
  decision: { auditToken: string; decidedAtMs: number; resolution: Record<string, unknown> };
}

/** A shared scope a proposal is for (an accept commits into it). */
export interface ProposalScope {
  kind: "mob" | "operator";
  /** The mob, or the operator. */
  key: string;
}

/** `meta/agent_memory/propose`: the application queues a proposal for an operator to decide. */
export interface ProposeAgentMemoryParams {
  /** `operator` needs `[agent_memory] operator_scope = "provisional"`. */
  scope: ProposalScope;
  title: string;
  body: string;
  description?: string;
  tags?: string[];
  /** The record kind an accept gives it (default `fact`). */
  kind?: string;
  realm?: string;
}
export interface ProposeAgentMemoryResult {
  proposalId: string;
  realm: string;
  scopeKind: "mob" | "operator";
  scopeKey: string;
  status: "pending";
  tainted: boolean;
  /** What a decision on it is bound to. */
  contentHash: string;
}

export type ProposalStatus = "pending" | "held" | "accepted" | "rejected";

/** A proposal without its body, as the console lists it (and as a decision reports it). */
export interface ProposalSummary {
  proposalId: string;
  scopeKind: "mob" | "operator";
  scopeKey: string;
  kind: string;
  title: string;
  author: Record<string, unknown> | null;
  status: ProposalStatus;
  /** Made by a session that had read untrusted content: an accept waits on a gated promotion. */
  tainted: boolean;
  createdAtMs: number;
  contentHash: string;
}

/** `meta/memory/panel/proposals` (console): the open proposals, pending or held. */
export interface ProposalsParams {
  realm?: string;
  /** 1..200, default 50. */
  limit?: number;
}
export interface ProposalsResult {
  proposals: (ProposalSummary & { realm: string })[];
  realms: string[];
}

/** `meta/memory/panel/proposal` (console): one proposal with its body. */
export interface ProposalParams {
  proposalId: string;
  realm?: string;
}
export interface ProposalResult {
  realm: string;
  proposal: ProposalSummary & { description: string; body: string; tags: string[]; bodyBytes: number };
  realms: string[];
}

export type ProposalVerdict = "accept" | "reject";

/** `meta/memory/proposals/decide` (console): accept or reject, bound to the hash read. */
export interface DecideProposalParams {
  proposalId: string;
  verdict: ProposalVerdict;
  /** The proposal's `contentHash` as read (64 lowercase hex). */
  expectedContentHash: string;
  realm?: string;
  rationale?: string;
}
export interface DecideProposalResult {
  realm: string;
  /** `gated`: a tainted proposal's accept waits on a gated promotion; `already_...`: a replay. */
  outcome: "accepted" | "rejected" | "gated" | "already_accepted" | "already_rejected" | "already_gated";
  proposal: ProposalSummary;
  /** The record an accept committed, as it stands now (no body). */
  record: Record<string, unknown> | null;
  /** The gated promotion waiting on a reviewer, while one does. */
  pendingId: string | null;
  /** The decision as audited (`review` exactly as stored): the same on every replay. */
  decision: { auditToken: string; decidedAtMs: number; review: Record<string, unknown> };
}

export type ToolFormat = "json_schema" | "openai" | "openai_responses" | "anthropic";

export interface MemoryToolDefinitionsParams {
  /** Default `json_schema` (the MCP shape). */
  format?: ToolFormat;
}
export interface MemoryToolDefinitionsResult {
  /** OPAQUE: tool definitions in the requested provider's own shape, ready to send to it. */
  tools: Record<string, unknown>[];
}

// -- gating ------------------------------------------------------------------------------------

export type RiskTier = "r0" | "r1" | "r2" | "r3";
export type GatingOutcome = "allowed" | "allowed_with_audit" | "pending_approval" | "safe_draft";
export type GatingDecision = "approve" | "reject" | "escalate";

export interface EvaluateGatingParams {
  action: string;
  actorId: string;
  riskTier: RiskTier;
  rationale?: string;
  requestedApprover?: string;
  approvalRecipient?: string;
  approvalChannel?: string;
  approvalTimeoutMs?: number;
  entity?: string;
  topic?: string;
}
export interface EvaluateGatingResult {
  actionId: string;
  action: string;
  actorId: string;
  riskTier: RiskTier;
  outcome: GatingOutcome;
  fallbackReason: string | null;
  pendingId: string | null;
  deadlineAtMs: number | null;
  auditId: string;
}

export interface DecideGatingParams {
  pendingId: string;
  approverId: string;
  decision: GatingDecision;
  reason?: string;
}
export interface DecideGatingResult {
  pendingId: string;
  actionId: string;
  approverId: string;
  decision: GatingDecision;
  outcome: GatingOutcome;
  decidedAtMs: number;
  reason: string | null;
  nextPendingId: string | null;
  auditId: string;
}

export interface GatingPendingEntry {
  pendingId: string;
  actionId: string;
  action: string;
  actorId: string;
  riskTier: RiskTier;
  requestedApprover: string | null;
  approvalRecipient: string | null;
  approvalChannel: string | null;
  rationale: string | null;
  entity: string | null;
  topic: string | null;
  description: string | null;
  createdAtMs: number;
  deadlineAtMs: number;
  escalatedFrom: string | null;
}
export interface GatingPendingResult {
  pending: GatingPendingEntry[];
}

export interface GatingAuditParams {
  /** 1..500, default 50. */
  limit?: number;
}
export interface GatingAuditEntry {
  auditId: string;
  timestampMs: number;
  eventType: string;
  actionId: string;
  pendingId: string | null;
  actorId: string;
  riskTier: RiskTier;
  outcome: GatingOutcome;
  /** OPAQUE: the event's own detail, wire keys. */
  detail: Record<string, unknown>;
}
export interface GatingAuditResult {
  entries: GatingAuditEntry[];
}

// -- timeline, status, capabilities, doctor -------------------------------------------------------

export interface TimelineQueryParams {
  /** An `eventId` (`console-evt-<n>`): resume after it. */
  after?: string;
  /** 1..500, default 100. */
  limit?: number;
}
export interface TimelineEvent {
  eventId: string;
  identity: string;
  eventType: string;
  timestampMs: number;
  /** OPAQUE: the event's payload, wire keys. */
  data: Record<string, unknown>;
}
export interface TimelineQueryResult {
  events: TimelineEvent[];
  nextAfter: string | null;
}

export interface StorageSlot {
  domain: string;
  class: "durable" | "scratch";
  resolution: "persistent" | "declared_ephemeral" | "non_persistent";
  backend: string;
  degraded: boolean;
  detail?: string;
}
export interface StorageCensus {
  blobDurability: string;
  blobStorePersistent: boolean;
  sessionStoreIncremental: boolean | null;
  slots: StorageSlot[];
}

export interface StatusResult {
  contractVersion: string;
  version: string;
  stateDir: string;
  features: {
    ledger?: { persisted: boolean; healthCheck: boolean };
    agentMemory?: {
      enabled: boolean;
      store?: string;
      realm?: string;
      selection?: Selection;
      llmWrites?: "observed" | "quarantined";
      recall?: "lexical" | "hybrid";
      /** Hybrid recall's model and what runs it; null for lexical recall. */
      embedding?: { model: string; runtime: "numpy" | "onnxruntime" | null } | null;
    };
    [feature: string]: unknown;
  };
  storage: StorageCensus;
}

export interface CapabilitiesResult {
  contractVersion: string;
  /** The methods this surface offers to this caller. */
  methods: string[];
  storage?: StorageCensus;
}

export interface StorageDoctorParams {
  /** This gateway's own state directory (over HTTP no other is diagnosed). */
  stateDir: string;
  identity?: string;
}
export interface DoctorFinding {
  severity: "info" | "warning" | "error";
  code: string;
  message: string;
  path?: string;
  realm?: string;
}
export interface StorageDoctorResult {
  stateDir: string;
  diagnosis: { findings: DoctorFinding[]; inventory: Record<string, unknown>[] };
  storage: StorageCensus | null;
}

// -- OpenRPC (rpc.discover): returned OPAQUE, exactly as the gateway sends it ----------------------

export interface OpenRpcContentDescriptor {
  name: string;
  required?: boolean;
  schema: Record<string, unknown>;
  [field: string]: unknown;
}
export interface OpenRpcMethod {
  name: string;
  summary?: string;
  paramStructure?: "by-name" | "by-position" | "either";
  params: OpenRpcContentDescriptor[];
  result?: OpenRpcContentDescriptor;
  [field: string]: unknown;
}
export interface OpenRpcDocument {
  openrpc: string;
  info: { title: string; version: string; [field: string]: unknown };
  methods: OpenRpcMethod[];
  [field: string]: unknown;
}

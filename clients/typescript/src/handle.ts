/**
 * MetaHandle: what `Meta.builder()...build()` returns. Its methods are the Python handle's
 * (REFERENCE 9), in camelCase: the identity (and the ledger's entity and topic) positional, the
 * rest in an options object, and the same results (a recall is the list of its records). Every
 * other method is its `client`'s.
 */

import type { MetaClient } from "./client.js";
import type {
  AgentMemoryRecord,
  ForgetAgentMemoryParams,
  ForgetAgentMemoryResult,
  AgentMemoryHistoryResult,
  GetAgentMemoryParams,
  GetAgentMemoryResult,
  MemoryIndexParams,
  MemoryIndexResult,
  MemoryQueryParams,
  MemoryQueryResult,
  MemoryStoreInfo,
  PurgeAgentMemoryResult,
  PurgeAgentMemoryTarget,
  RecallAgentMemoryParams,
  RememberAgentMemoryParams,
  RequestOptions,
  UpdateAgentMemoryParams,
  UpdateAgentMemoryResult,
} from "./types.js";

export type MemoryIndexOptions = Omit<MemoryIndexParams, "entity" | "topic">;
export type MemoryQueryFilters = Omit<MemoryQueryParams, "query">;
export type RememberOptions = Omit<RememberAgentMemoryParams, "identity">;
export type RecallOptions = Omit<RecallAgentMemoryParams, "identity">;
export type UpdateOptions = Omit<UpdateAgentMemoryParams, "identity" | "memoryId">;
export type ForgetOptions = Omit<ForgetAgentMemoryParams, "identity" | "memoryId">;
export type GetOptions = Omit<GetAgentMemoryParams, "identity" | "memoryId">;

/** A running gateway child of `MetaBuilder.build()`. Close it to end the child and release the
 * state dir. */
export class MetaHandle {
  /** The client of the child: every method of the gateway (sessions, list, gating, status, ...). */
  readonly client: MetaClient;

  constructor(client: MetaClient) {
    this.client = client;
  }

  /** Record a fact, a conflict signal (`conflict: true`), or both in the assertion ledger. */
  async memoryIndex(
    entity: string,
    topic: string,
    options: MemoryIndexOptions = {},
    request?: RequestOptions,
  ): Promise<MemoryIndexResult> {
    return this.client.memoryIndex({ ...options, entity, topic }, request);
  }

  /** The ledger's assertions and conflict signals: `query` a substring of entity, topic or fact
   * (or every filter, as an object), `filters` exact entity, topic or store. */
  async memoryQuery(
    query?: string | MemoryQueryParams | null,
    filters: MemoryQueryFilters = {},
    request?: RequestOptions,
  ): Promise<MemoryQueryResult> {
    const params = typeof query === "string" ? { query } : { ...(query ?? {}) };
    return this.client.memoryQuery({ ...params, ...filters }, request);
  }

  /** The ledger's stores and how many records each holds, in the ledger's order. */
  async memoryStores(request?: RequestOptions): Promise<MemoryStoreInfo[]> {
    return (await this.client.memoryStores(request)).stores;
  }

  /** Write a memory for `identity` (`null` with a shared `scope`); returns the record as stored. */
  async rememberAgentMemory(
    identity: string | null,
    options: RememberOptions,
    request?: RequestOptions,
  ): Promise<AgentMemoryRecord> {
    return this.client.rememberAgentMemory({ ...options, identity: identity ?? undefined }, request);
  }

  /** Recall `identity`'s active memories (by context, or the newest), best first. */
  async recallAgentMemory(
    identity: string,
    options: RecallOptions = {},
    request?: RequestOptions,
  ): Promise<AgentMemoryRecord[]> {
    return (await this.client.recallAgentMemory({ ...options, identity }, request)).records;
  }

  /** Replace a memory: a new record supersedes `memoryId`. */
  async updateAgentMemory(
    identity: string | null,
    memoryId: string,
    options: UpdateOptions,
    request?: RequestOptions,
  ): Promise<UpdateAgentMemoryResult> {
    return this.client.updateAgentMemory({ ...options, identity: identity ?? undefined, memoryId }, request);
  }

  /** Forget a memory (a tombstone); `deleted` is false when it was absent, already forgotten or
   * another identity's. */
  async forgetAgentMemory(
    identity: string | null,
    memoryId: string,
    options: ForgetOptions = {},
    request?: RequestOptions,
  ): Promise<ForgetAgentMemoryResult> {
    return this.client.forgetAgentMemory({ ...options, identity: identity ?? undefined, memoryId }, request);
  }

  /** One record of `identity`'s, whatever its status, with its successor; an id it does not have
   * is UnknownRecord (-32001). */
  async getAgentMemory(
    identity: string,
    memoryId: string,
    options: GetOptions = {},
    request?: RequestOptions,
  ): Promise<GetAgentMemoryResult> {
    return this.client.getAgentMemory({ ...options, identity, memoryId }, request);
  }

  /** The lineage of one of `identity`'s records, oldest first: every version (updates, the
   * quarantined record a release came from, the release), each with the reason it ended. */
  async agentMemoryHistory(
    identity: string,
    memoryId: string,
    options: GetOptions = {},
    request?: RequestOptions,
  ): Promise<AgentMemoryHistoryResult> {
    return this.client.agentMemoryHistory({ ...options, identity, memoryId }, request);
  }

  /** Erase for real, from every file and table: `{ memoryId }` one record's whole lineage (its
   * versions, released successors, quarantined originals, promoted copies), `{ memoryIds }` several
   * (1..1000), `{ all: true }` everything of `identity` in the realm. Resolves to the receipt (ids
   * and content hashes, never content); an id not in `identity`'s scope is UnknownRecord (-32001),
   * a target that is none or several of the three InvalidParams (-32602). Never retried. */
  async purgeAgentMemory(
    identity: string,
    target: PurgeAgentMemoryTarget,
    options: GetOptions = {},
    request?: RequestOptions,
  ): Promise<PurgeAgentMemoryResult> {
    return this.client.purgeAgentMemory({ ...options, ...target, identity }, request);
  }

  /** End the child (it answers what it has read, then exits) and release the state dir. */
  async close(): Promise<void> {
    await this.client.close();
  }
}

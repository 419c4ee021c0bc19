// Proposals through the client: the application queues one, a console reviewer reads and
// decides it (bound to its content hash), a replay answers the original decision, and a stale
// hash is refused with the gateway's reason.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { ErrorCode, MetaClient, MetaError } from "../src/index.js";
import { removeTemps, sha256, startHttpGateway, tempDir, writeConfig, type HttpGateway } from "../testing/gateway.js";

const CONSOLE_TOKEN = "console-token-5d21e8";

describe("proposals over HTTP", () => {
  let gateway: HttpGateway;
  let client: MetaClient;

  before(async () => {
    const dir = await tempDir();
    const config = await writeConfig(
      dir,
      [
        "[agent_memory]",
        'operator_scope = "provisional"',
        "",
        "[[console.auth.tokens]]",
        `token_sha256 = "${sha256(CONSOLE_TOKEN)}"`,
        'subject = "ops"',
        "",
      ].join("\n"),
    );
    gateway = await startHttpGateway({ config });
    client = await MetaClient.connect({ url: gateway.url, consoleToken: CONSOLE_TOKEN });
  });

  after(async () => {
    await client?.close();
    await gateway?.stop();
    await removeTemps();
  });

  it("queues a proposal that a console reviewer reads and accepts into its scope", async () => {
    const made = await client.proposeAgentMemory({
      scope: { kind: "operator", key: "acme" },
      title: "Billing",
      body: "Invoices go out on the first of the month.",
      tags: ["finance"],
    });
    assert.equal(made.status, "pending");
    assert.equal(made.scopeKind, "operator");

    const { proposals } = await client.console.proposals();
    const listed = proposals.find((p) => p.proposalId === made.proposalId);
    assert.equal(listed?.contentHash, made.contentHash);
    assert.ok(listed !== undefined && !("body" in listed), "the listing withholds bodies");
    const { proposal } = await client.console.proposal({ proposalId: made.proposalId });
    assert.equal(proposal.body, "Invoices go out on the first of the month.");

    const decided = await client.console.decideProposal({
      proposalId: made.proposalId,
      verdict: "accept",
      expectedContentHash: proposal.contentHash,
      rationale: "the finance runbook says so",
    });
    assert.equal(decided.outcome, "accepted");
    assert.equal(decided.proposal.status, "accepted");
    assert.equal(typeof decided.record?.memoryId, "string");
    // The decision is passed through as audited: its review keeps the wire's own keys.
    assert.deepEqual(decided.decision.review.reviewer, { kind: "console", principal: "ops" });
    assert.equal(decided.decision.review.expected_content_hash, proposal.contentHash);

    const again = await client.console.decideProposal({
      proposalId: made.proposalId,
      verdict: "accept",
      expectedContentHash: proposal.contentHash,
    });
    assert.equal(again.outcome, "already_accepted");
    assert.deepEqual(again.decision, decided.decision);
  });

  it("gets a stale content hash refused with the gateway's reason", async () => {
    const made = await client.proposeAgentMemory({ scope: { kind: "mob", key: "crew" }, title: "Freeze", body: "None in December." });
    await assert.rejects(
      client.console.decideProposal({ proposalId: made.proposalId, verdict: "reject", expectedContentHash: "0".repeat(64) }),
      (e: unknown) =>
        e instanceof MetaError &&
        e.code === ErrorCode.QuarantineReviewRefused &&
        (e.data as { kind?: string; reason?: string }).kind === "memory_proposal_review_refused" &&
        (e.data as { reason?: string }).reason === "content_mismatch",
    );
    const { proposals } = await client.console.proposals({ limit: 200 });
    assert.equal(proposals.find((p) => p.proposalId === made.proposalId)?.status, "pending");
  });
});

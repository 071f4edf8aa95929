/**
 * "An open Proposal changes this Record": the open Proposals into the branch read whose Kinds
 * include the Record's (at most `CHECKED`, newest first) are diffed as their page diffs them
 * (proposalDiff: the source branch's own Revisions), and each that adds, changes or removes the
 * Record is named with a link, what it changes and the value it proposes.
 */
import { Alert, Anchor, List, Text } from "@mantine/core";
import { Link } from "react-router";
import { listProposals } from "../api/proposals";
import type { Proposal } from "../api/types";
import { recordDiffs } from "../diff/beforeAfter";
import { proposalDiff } from "../proposals/proposalDiff";
import { formatValue } from "../shell/format";
import { useApi } from "../shell/useApi";

/** Open Proposals looked at, at most. */
const CHECKED = 10;

interface Pending {
  proposal: Proposal;
  change: string;
  attributes: Array<{ name: string; after: unknown }>;
}

async function pendingChanges(domain: string, branch: string, kind: string, ref: string): Promise<Pending[]> {
  const open = await listProposals(domain, { status: "open", assigned: false });
  const candidates = open.proposals.filter((p) => p.target_ref === branch && p.kinds.includes(kind)).slice(0, CHECKED);
  const found: Pending[] = [];
  await Promise.all(
    candidates.map(async (proposal) => {
      try {
        const diff = await proposalDiff(domain, proposal);
        const record = diff ? recordDiffs(diff).find((r) => r.ref === ref) : undefined;
        if (record) {
          found.push({
            proposal,
            change: record.change,
            attributes: record.rows.filter((row) => row.change !== "unchanged").map((row) => ({ name: row.attribute, after: row.after })),
          });
        }
      } catch {
        // A Proposal whose changes cannot be read (Revisions the reader may not read) is not named.
      }
    }),
  );
  return found.sort((a, b) => b.proposal.created_at.localeCompare(a.proposal.created_at));
}

export function ProposalBanner({ domain, branch, kind, recordRef }: { domain: string; branch: string; kind: string; recordRef: string }) {
  const pending = useApi(branch ? () => pendingChanges(domain, branch, kind, recordRef) : null, [domain, branch, kind, recordRef]);
  const list = pending.data ?? [];
  if (list.length === 0) return null;
  return (
    <Alert color="blue" title={list.length === 1 ? "An open Proposal changes this Record" : `${list.length} open Proposals change this Record`} data-testid="proposal-banner">
      <List size="sm">
        {list.map(({ proposal, change, attributes }) => (
          <List.Item key={proposal.id}>
            <Anchor component={Link} to={`/d/${encodeURIComponent(domain)}/proposals/${encodeURIComponent(proposal.id)}`} size="sm">
              {proposal.title}
            </Anchor>{" "}
            <Text span size="sm">
              ({proposal.author}) {change === "changed" ? "sets" : change === "added" ? "adds it with" : "removes it"}{" "}
              {change !== "removed" && attributes.map((a) => `${a.name} = ${formatValue(a.after)}`).join(", ")}
            </Text>
          </List.Item>
        ))}
      </List>
    </Alert>
  );
}

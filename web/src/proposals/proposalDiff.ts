/**
 * What a Proposal changes, Record by Record. The Proposal answer holds no diff, so it is read from
 * the history:
 * - an open Proposal: the source branch's own Revisions (the change feed of the source lists the
 *   base's Revisions too, named after their branch); the diff runs on the source from the parent of
 *   its first own Revision to its last;
 * - a merged Proposal: the merge Revision on the target, from its first parent to itself.
 * Both reads need a grant not narrowed to Kinds (the feed); the API's problem says so otherwise.
 */
import { allChanges } from "../api/domain";
import { getDiff } from "../api/records";
import type { DiffResult, Proposal, RevisionEvent } from "../api/types";

export interface DiffRange {
  branch: string;
  from: string;
  to: string;
}

/** The range of a source branch's own Revisions among the feed's events (oldest first), or null. */
export function ownRange(events: RevisionEvent[], source: string): DiffRange | null {
  const own = events.filter((e) => e.branch === source).sort((a, b) => a.sequence - b.sequence);
  const first = own[0];
  const last = own[own.length - 1];
  if (!first || !last || !first.parents[0]) return null;
  return { branch: source, from: first.parents[0], to: last.revision };
}

/** The range of a merge Revision: its first parent to itself, on the target. */
export function mergeRange(events: RevisionEvent[], target: string, merged: string): DiffRange | null {
  const event = events.find((e) => e.revision === merged);
  if (!event || !event.parents[0]) return null;
  return { branch: target, from: event.parents[0], to: merged };
}

/** The Proposal's diff, or null when there is nothing to show (no own Revision, branch gone). */
export async function proposalDiff(domain: string, proposal: Proposal): Promise<DiffResult | null> {
  let range: DiffRange | null = null;
  if (proposal.status === "merged" && proposal.merged_revision) {
    range = mergeRange(await allChanges(domain, proposal.target_ref), proposal.target_ref, proposal.merged_revision);
  } else if (!proposal.branch_deleted) {
    range = ownRange(await allChanges(domain, proposal.source_ref), proposal.source_ref);
  }
  return range ? getDiff(domain, range.branch, range.from, range.to) : null;
}

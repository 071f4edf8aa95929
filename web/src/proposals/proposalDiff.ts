/**
 * What a Proposal changes, Record by Record. The Proposal answer holds no diff, so it is read from
 * the history with `GET .../revisions/{revision}`:
 * - an open Proposal: the source branch's own Revisions, read back from its head while they were
 *   committed on the source (a Revision's `branch`); the diff runs on the source from the parent of
 *   its first own Revision to its head;
 * - a merged Proposal: the merge Revision on the target, from its first parent to itself.
 * Only those Revisions are read (not the branches' whole change feeds). Like the feed, the reads need
 * a grant not narrowed to Kinds; the API's problem says so otherwise.
 */
import { getRevision, listBranches } from "../api/domain";
import { getDiff } from "../api/records";
import type { DiffResult, Proposal, RevisionDoc } from "../api/types";

export interface DiffRange {
  branch: string;
  from: string;
  to: string;
}

/** Reads a Revision on a branch's history. */
export type RevisionRead = (revision: string) => Promise<RevisionDoc>;

/** The range of a source branch's own Revisions back from its head (at most `limit`), or null. */
export async function ownRange(read: RevisionRead, head: string | null, source: string, limit = 1000): Promise<DiffRange | null> {
  if (!head) return null;
  let doc = await read(head);
  if (doc.branch !== source) return null;
  for (let n = 0; n < limit; n++) {
    const parent = doc.parents[0];
    if (!parent) return null;
    const before = await read(parent);
    if (before.branch !== source) return { branch: source, from: parent, to: head };
    doc = before;
  }
  return null;
}

/** The range of a merge Revision: its first parent to itself, on the target. */
export async function mergeRange(read: RevisionRead, target: string, merged: string): Promise<DiffRange | null> {
  const doc = await read(merged);
  return doc.parents[0] ? { branch: target, from: doc.parents[0], to: doc.id } : null;
}

/** The Revisions a Proposal brings: the source's own while open, the merge Revision once merged;
 * null when there is nothing to show (no own Revision, branch gone). */
export async function proposalRange(domain: string, proposal: Proposal): Promise<DiffRange | null> {
  const on = (branch: string): RevisionRead => async (revision) => (await getRevision(domain, branch, revision, 1)).revision;
  let range: DiffRange | null = null;
  if (proposal.status === "merged" && proposal.merged_revision) {
    range = await mergeRange(on(proposal.target_ref), proposal.target_ref, proposal.merged_revision);
  } else if (!proposal.branch_deleted) {
    const { branches } = await listBranches(domain);
    const head = branches.find((b) => b.name === proposal.source_ref)?.head ?? null;
    range = await ownRange(on(proposal.source_ref), head, proposal.source_ref);
  }
  return range;
}

/** The Proposal's diff, or null when there is nothing to show (no own Revision, branch gone). */
export async function proposalDiff(domain: string, proposal: Proposal): Promise<DiffResult | null> {
  const range = await proposalRange(domain, proposal);
  return range ? getDiff(domain, range.branch, range.from, range.to) : null;
}

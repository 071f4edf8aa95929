/**
 * Comparing two branches by walking their first-parent histories back from their heads, one
 * Revision at a time (`GET .../revisions/{revision}`), until they meet: the Revisions only the head
 * has (ahead), those only the base has (behind), and where they last met (the merge base), from which
 * the head's changes are diffed. The side whose Revision is further from the root (a larger
 * generation) steps back; both step when equal. Only the Revisions since the fork are read (not
 * both whole change feeds), at most `limit` on each side: past it the counts say "at least".
 */
import type { RevisionDoc } from "../api/types";

export interface Comparison {
  /** Revisions on the head's history and not on the base's, newest first. */
  ahead: RevisionDoc[];
  /** Revisions on the base's history and not on the head's, newest first. */
  behind: RevisionDoc[];
  /** The newest Revision on both histories (null: none shared, or not found within the limit). */
  mergeBase: string | null;
  /** The head's newest Revision (null: no Revision). */
  head: string | null;
  /** The walk stopped at the limit before the histories met. */
  truncated: boolean;
}

/** Reads a Revision on a side's branch ("base" or "head"). */
export type RevisionReader = (side: "base" | "head", revision: string) => Promise<RevisionDoc>;

export async function compareBranches(
  baseHead: string | null,
  headHead: string | null,
  read: RevisionReader,
  limit = 500,
): Promise<Comparison> {
  const ahead: RevisionDoc[] = [];
  const behind: RevisionDoc[] = [];
  let a = baseHead ? await read("base", baseHead) : null;
  let b = headHead ? await read("head", headHead) : null;
  const back = async (side: "base" | "head", doc: RevisionDoc) => (doc.parents[0] ? read(side, doc.parents[0]) : null);
  while (a && b && a.id !== b.id) {
    if (ahead.length >= limit || behind.length >= limit) {
      return { ahead, behind, mergeBase: null, head: headHead, truncated: true };
    }
    const stepBase = a.generation >= b.generation;
    const stepHead = b.generation >= a.generation;
    if (stepBase) behind.push(a);
    if (stepHead) ahead.push(b);
    [a, b] = await Promise.all([stepBase ? back("base", a) : a, stepHead ? back("head", b) : b]);
  }
  if (a && b) return { ahead, behind, mergeBase: a.id, head: headHead, truncated: false };
  // No shared Revision: whatever is left on either side is its own.
  for (let rest = a; rest; rest = await back("base", rest)) behind.push(rest);
  for (let rest = b; rest; rest = await back("head", rest)) ahead.push(rest);
  return { ahead, behind, mergeBase: null, head: headHead, truncated: false };
}

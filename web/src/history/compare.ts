/**
 * Comparing two branches from their change feeds (each lists every Revision of its first-parent
 * history, the ones it shares with the other included): the Revisions only the head has (ahead),
 * those only the base has (behind), and where they last met (the newest shared Revision), from
 * which the head's changes are diffed.
 */
import type { RevisionEvent } from "../api/types";

export interface Comparison {
  /** Revisions on the head's history and not on the base's, oldest first. */
  ahead: RevisionEvent[];
  /** Revisions on the base's history and not on the head's, oldest first. */
  behind: RevisionEvent[];
  /** The newest Revision on both histories (null: none shared). */
  mergeBase: string | null;
  /** The head's newest Revision (null: no Revision). */
  head: string | null;
}

export function compareHistories(base: RevisionEvent[], head: RevisionEvent[]): Comparison {
  const inBase = new Set(base.map((e) => e.revision));
  const inHead = new Set(head.map((e) => e.revision));
  const ahead = head.filter((e) => !inBase.has(e.revision));
  const behind = base.filter((e) => !inHead.has(e.revision));
  let mergeBase: RevisionEvent | null = null;
  for (const e of head) {
    if (inBase.has(e.revision) && (mergeBase === null || e.generation > mergeBase.generation)) mergeBase = e;
  }
  // A head with no Revision of its own since the fork starts from the base's Revision it was made
  // from: the parent of its first own Revision when nothing is shared.
  const base0 = mergeBase?.revision ?? ahead[0]?.parents[0] ?? null;
  const newest = head.reduce<RevisionEvent | null>((best, e) => (best === null || e.generation > best.generation ? e : best), null);
  return { ahead, behind, mergeBase: base0, head: newest?.revision ?? null };
}

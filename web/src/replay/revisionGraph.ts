/**
 * The graph as of a step's Revision, over the session's drawing.
 *
 * The session's drawing holds what its steps touched; at a step's Revision the graph around those
 * Records may differ: Links the session saw at another Revision may not exist there (deleted since,
 * or not made yet), and Records the session never touched are linked to them. When the replay is
 * paused, the step's Records present at its Revision are read with `POST /neighborhood` (one Link
 * deep, at the step's branch and Revision) and the answer becomes an overlay:
 *
 * - `missingEdges`: edges drawn so far with an end among those Records that the answer does not
 *   hold: not there at this Revision, so not drawn (only when the answer was not cut by the walk
 *   caps: a capped answer proves nothing missing);
 * - `extraEdges`: the answer's Links the session never touched, between drawn nodes or to `extraNodes`
 *   (Records the session never touched), drawn light, the new Records hollow around the node they
 *   hang from, at most `cap` of them.
 */

import type { Neighborhood } from "../api/types";
import { kindOf, type Timeline } from "./timeline";

export type { Neighborhood };

export interface ExtraNode {
  ref: string;
  kind: string;
  /** The drawn node it hangs from (its position is around that node's). */
  anchor: number;
}

export interface RevisionOverlay {
  revision: string;
  missingEdges: number[];
  /** Node ids: `>= 0` a timeline node, `< 0` the extra node `-1 - id`. */
  extraEdges: Array<[number, number]>;
  extraNodes: ExtraNode[];
  /** Extra Records not drawn (past the cap). */
  more: number;
  /** The Links around the step's Records at the Revision. */
  links: number;
}

export const EMPTY_OVERLAY: RevisionOverlay = { revision: "", missingEdges: [], extraEdges: [], extraNodes: [], more: 0, links: 0 };

export function revisionOverlay(timeline: Timeline, step: number, seeds: readonly string[], answer: Neighborhood, cap = 120): RevisionOverlay {
  const seedIds = new Set(seeds.map((ref) => timeline.nodeIndex.get(ref)).filter((id): id is number => id !== undefined));
  const atRevision = new Set(answer.links.map((link) => `${link.relation}\u0000${link.from}\u0000${link.to}`));
  const drawnEdges = new Set<string>();
  const missingEdges: number[] = [];
  for (let e = 0; e < timeline.edgeRelations.length; e++) {
    if (timeline.edgeFirstStep[e]! > step) continue;
    const a = timeline.edgeEnds[2 * e]!;
    const b = timeline.edgeEnds[2 * e + 1]!;
    const name = `${timeline.edgeRelations[e]}\u0000${timeline.nodes[a]}\u0000${timeline.nodes[b]}`;
    drawnEdges.add(name);
    if (!answer.capped && (seedIds.has(a) || seedIds.has(b)) && !atRevision.has(name)) missingEdges.push(e);
  }
  const drawnNode = (ref: string): number | undefined => {
    const id = timeline.nodeIndex.get(ref);
    return id !== undefined && timeline.nodeFirstStep[id]! <= step ? id : undefined;
  };
  const extraIndex = new Map<string, number>();
  const extraNodes: ExtraNode[] = [];
  const extraEdges: Array<[number, number]> = [];
  const over = new Set<string>();
  const idOf = (ref: string, anchor: number | undefined): number | undefined => {
    const drawn = drawnNode(ref);
    if (drawn !== undefined) return drawn;
    if (over.has(ref)) return undefined;
    const known = extraIndex.get(ref);
    if (known !== undefined) return -1 - known;
    if (anchor === undefined) return undefined;
    if (extraNodes.length >= cap) {
      over.add(ref);
      return undefined;
    }
    extraIndex.set(ref, extraNodes.length);
    extraNodes.push({ ref, kind: kindOf(ref), anchor });
    return -1 - (extraNodes.length - 1);
  };
  for (const link of answer.links) {
    const name = `${link.relation}\u0000${link.from}\u0000${link.to}`;
    if (drawnEdges.has(name)) continue;
    const from = drawnNode(link.from);
    const to = drawnNode(link.to);
    const a = idOf(link.from, to);
    const b = idOf(link.to, from);
    if (a === undefined || b === undefined) continue;
    extraEdges.push([a, b]);
  }
  return { revision: answer.revision ?? "", missingEdges, extraEdges, extraNodes, more: over.size, links: answer.links.length };
}

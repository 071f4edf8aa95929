/**
 * The replay's timeline model: a session's entries turned, once, into indexed arrays the renderer
 * and the player read every frame without allocating.
 *
 * Every Record a step touched becomes a node (by its `Kind/key` reference), every Link an edge
 * (deduplicated by Relation and ends; an end no step named as a Record is still a node). For each
 * node and edge the first step that touched it is kept, so "what is on the graph at step s" is one
 * comparison per item (`firstStep <= s`), and the current step's items are a short list per step.
 * Notes interleave with steps in `entries`: each note is attached to the step it follows (notes
 * before the first step are `leadingNotes`).
 */

import type { Session, SessionNote, SessionStep, TouchedLink } from "./types";

export interface Timeline {
  session: string;
  steps: SessionStep[];
  /** Notes written before the first step. */
  leadingNotes: SessionNote[];
  /** `notesAfter[i]`: the notes written after step i and before step i + 1. */
  notesAfter: SessionNote[][];
  /** Node id -> `Kind/key`. */
  nodes: string[];
  /** Node id -> its Kind (the part of the reference before the first `/`). */
  nodeKinds: string[];
  nodeIndex: Map<string, number>;
  /** Edge e joins nodes `edgeEnds[2e]` and `edgeEnds[2e + 1]`. */
  edgeEnds: Int32Array;
  edgeRelations: string[];
  /** The first step that touched each node (or edge). */
  nodeFirstStep: Int32Array;
  edgeFirstStep: Int32Array;
  /** The node (edge) ids each step touched. */
  stepNodes: Int32Array[];
  stepEdges: Int32Array[];
}

/** The Kind of a `Kind/key` reference. */
export function kindOf(ref: string): string {
  const slash = ref.indexOf("/");
  return slash < 0 ? ref : ref.slice(0, slash);
}

/** Split a `Kind/key` reference (the key may itself hold `/`). */
export function splitRef(ref: string): { kind: string; key: string } {
  const slash = ref.indexOf("/");
  return slash < 0 ? { kind: ref, key: "" } : { kind: ref.slice(0, slash), key: ref.slice(slash + 1) };
}

function isRef(value: unknown): value is string {
  return typeof value === "string" && value.indexOf("/") > 0;
}

function linksOf(step: SessionStep): TouchedLink[] {
  const links = step.touched_links;
  if (!Array.isArray(links)) return [];
  return links.filter((link) => link && isRef(link.from) && isRef(link.to));
}

export function buildTimeline(session: Session): Timeline {
  const steps: SessionStep[] = [];
  const leadingNotes: SessionNote[] = [];
  const notesAfter: SessionNote[][] = [];
  for (const entry of session.entries) {
    if (entry.kind === "step") {
      steps.push(entry);
      notesAfter.push([]);
    } else if (steps.length === 0) {
      leadingNotes.push(entry);
    } else {
      notesAfter[steps.length - 1]!.push(entry);
    }
  }

  const nodes: string[] = [];
  const nodeIndex = new Map<string, number>();
  const nodeFirst: number[] = [];
  const edgeIndex = new Map<string, number>();
  const ends: number[] = [];
  const edgeRelations: string[] = [];
  const edgeFirst: number[] = [];
  const stepNodes: Int32Array[] = [];
  const stepEdges: Int32Array[] = [];

  const node = (ref: string, step: number): number => {
    let id = nodeIndex.get(ref);
    if (id === undefined) {
      id = nodes.length;
      nodes.push(ref);
      nodeIndex.set(ref, id);
      nodeFirst.push(step);
    }
    return id;
  };

  steps.forEach((step, s) => {
    const touchedNodes = new Set<number>();
    for (const ref of step.touched ?? []) {
      if (isRef(ref)) touchedNodes.add(node(ref, s));
    }
    const touchedEdges = new Set<number>();
    for (const link of linksOf(step)) {
      const from = node(link.from, s);
      const to = node(link.to, s);
      touchedNodes.add(from);
      touchedNodes.add(to);
      const name = `${link.relation}\u0000${link.from}\u0000${link.to}`;
      let id = edgeIndex.get(name);
      if (id === undefined) {
        id = edgeRelations.length;
        edgeIndex.set(name, id);
        ends.push(from, to);
        edgeRelations.push(link.relation);
        edgeFirst.push(s);
      }
      touchedEdges.add(id);
    }
    stepNodes.push(Int32Array.from(touchedNodes));
    stepEdges.push(Int32Array.from(touchedEdges));
  });

  return {
    session: session.session,
    steps,
    leadingNotes,
    notesAfter,
    nodes,
    nodeKinds: nodes.map(kindOf),
    nodeIndex,
    edgeEnds: Int32Array.from(ends),
    edgeRelations,
    nodeFirstStep: Int32Array.from(nodeFirst),
    edgeFirstStep: Int32Array.from(edgeFirst),
    stepNodes,
    stepEdges,
  };
}

/** The notes to show beside step `s`: those written since the step before, and those after it. */
export function notesAround(timeline: Timeline, s: number): { before: SessionNote[]; after: SessionNote[] } {
  if (s < 0 || s >= timeline.steps.length) return { before: [], after: [] };
  return {
    before: (s === 0 ? timeline.leadingNotes : timeline.notesAfter[s - 1]) ?? [],
    after: timeline.notesAfter[s] ?? [],
  };
}

/** Clamp a step number (from a permalink or a slider) into the timeline; NaN gives 0. */
export function clampStep(timeline: Timeline, s: number): number {
  if (timeline.steps.length === 0 || !Number.isFinite(s)) return 0;
  return Math.min(timeline.steps.length - 1, Math.max(0, Math.trunc(s)));
}

/** Per-step totals for the list and the side panel. */
export function stepSummary(step: SessionStep): { records: number; links: number; failed: boolean } {
  return {
    records: step.touched?.length ?? 0,
    links: step.touched_links?.length ?? 0,
    failed: step.status >= 400,
  };
}

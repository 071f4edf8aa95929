/**
 * The neighbourhood canvas's model: the Records and Links read so far around one Record (the seed),
 * grown by each expansion, and the part of it a view draws.
 *
 * Each `POST /neighborhood` answer is folded in: its Records (a Record's distance from the seed is
 * the smallest known), its Links (one per Relation and ends). The API leaves out what the caller may
 * not read (a hidden Kind is unknown there), so nothing here has to hide it; a Link whose end is not
 * among the Records read is never drawn either.
 *
 * What is drawn: the Records reachable from the seed through Links of the Relations shown, among the
 * Kinds shown, nearest first, at most `cap` of them; the rest are counted ("N more"), never drawn.
 * The drawn graph becomes a one-step timeline, so the replay's renderer, layout and engine draw it.
 */

import type { Neighborhood } from "../api/types";
import type { SessionStep } from "../replay/types";
import { kindOf, type Timeline } from "../replay/timeline";

export type { Neighborhood };

export interface GraphRecord {
  ref: string;
  kind: string;
  key: string;
  title: string;
  /** Links from the seed (the smallest known). */
  depth: number;
}

export interface GraphLink {
  relation: string;
  from: string;
  to: string;
}

export interface ExploreGraph {
  seed: string;
  records: Map<string, GraphRecord>;
  links: Map<string, GraphLink>;
  /** The Records whose neighbourhood was read (the seed first). */
  expanded: string[];
  /** An answer was cut by the Domain's walk caps (read.traverse). */
  capped: boolean;
}

export interface GraphFilter {
  /** Kinds not to draw (the seed is drawn whatever its Kind). */
  hiddenKinds: ReadonlySet<string>;
  /** Relations not to follow. */
  hiddenRelations: ReadonlySet<string>;
}

export interface GraphView {
  records: GraphRecord[];
  links: GraphLink[];
  /** Records reachable with this filter but not drawn (past the cap). */
  more: number;
  /** Every Kind and Relation read so far (for the filter pickers). */
  kinds: string[];
  relations: string[];
}

export const linkName = (link: GraphLink): string => `${link.relation}\u0000${link.from}\u0000${link.to}`;

export function emptyGraph(seed: string): ExploreGraph {
  return { seed, records: new Map(), links: new Map(), expanded: [], capped: false };
}

/** The graph with one more neighbourhood read around `from` (the seed for the first read). */
export function addNeighborhood(graph: ExploreGraph, from: string, answer: Neighborhood): ExploreGraph {
  const records = new Map(graph.records);
  const base = from === graph.seed ? 0 : (records.get(from)?.depth ?? 0);
  for (const record of answer.records) {
    const depth = base + record.depth;
    const known = records.get(record.ref);
    if (!known || known.depth > depth) {
      records.set(record.ref, { ref: record.ref, kind: record.kind, key: record.key, title: record.title ?? "", depth });
    }
  }
  const links = new Map(graph.links);
  for (const link of answer.links) {
    const entry = { relation: link.relation, from: link.from, to: link.to };
    links.set(linkName(entry), entry);
  }
  const expanded = graph.expanded.includes(from) ? graph.expanded : [...graph.expanded, from];
  return { seed: graph.seed, records, links, expanded, capped: graph.capped || answer.capped };
}

/** What to draw with `filter`: breadth-first from the seed, nearest first, at most `cap` Records. */
export function viewOf(graph: ExploreGraph, filter: GraphFilter, cap: number): GraphView {
  const kinds = [...new Set([...graph.records.values()].map((r) => r.kind))].sort();
  const relations = [...new Set([...graph.links.values()].map((l) => l.relation))].sort();
  if (!graph.records.has(graph.seed)) return { records: [], links: [], more: 0, kinds, relations };
  const shown = (ref: string) => {
    const record = graph.records.get(ref);
    return record !== undefined && (ref === graph.seed || !filter.hiddenKinds.has(record.kind));
  };
  const around = new Map<string, GraphLink[]>();
  const usable: GraphLink[] = [];
  for (const link of graph.links.values()) {
    if (filter.hiddenRelations.has(link.relation) || !shown(link.from) || !shown(link.to)) continue;
    usable.push(link);
    for (const end of [link.from, link.to]) {
      const list = around.get(end);
      if (list) list.push(link);
      else around.set(end, [link]);
    }
  }
  // Breadth-first from the seed; within a hop, by known distance then reference (a stable order).
  const order: string[] = [graph.seed];
  const seen = new Set(order);
  for (let i = 0; i < order.length; i++) {
    const next = (around.get(order[i]!) ?? [])
      .map((link) => (link.from === order[i] ? link.to : link.from))
      .filter((ref) => !seen.has(ref));
    next.sort((a, b) => graph.records.get(a)!.depth - graph.records.get(b)!.depth || a.localeCompare(b));
    for (const ref of next) {
      if (seen.has(ref)) continue;
      seen.add(ref);
      order.push(ref);
    }
  }
  const drawn = order.slice(0, Math.max(1, cap));
  const inView = new Set(drawn);
  return {
    records: drawn.map((ref) => graph.records.get(ref)!),
    links: usable.filter((link) => inView.has(link.from) && inView.has(link.to)),
    more: order.length - drawn.length,
    kinds,
    relations,
  };
}

/** The view as a one-step timeline for the replay's renderer: `highlighted` Records ringed and
 * labelled (the seed and the expanded ones), the others dimmed. */
export function timelineOf(view: GraphView, highlighted: readonly string[], name: string): Timeline {
  const nodes = view.records.map((r) => r.ref);
  const nodeIndex = new Map(nodes.map((ref, i) => [ref, i]));
  const ends: number[] = [];
  for (const link of view.links) ends.push(nodeIndex.get(link.from)!, nodeIndex.get(link.to)!);
  const current = highlighted.map((ref) => nodeIndex.get(ref)).filter((i): i is number => i !== undefined);
  // The renderer reads the step's touched nodes and edges; the step itself is never shown.
  const step = { kind: "step", touched: [], touched_links: [] } as unknown as SessionStep;
  return {
    session: name,
    steps: [step],
    leadingNotes: [],
    notesAfter: [[]],
    nodes,
    nodeKinds: nodes.map(kindOf),
    nodeIndex,
    edgeEnds: Int32Array.from(ends),
    edgeRelations: view.links.map((l) => l.relation),
    nodeFirstStep: new Int32Array(nodes.length),
    edgeFirstStep: new Int32Array(view.links.length),
    stepNodes: [Int32Array.from(current)],
    stepEdges: [new Int32Array(0)],
  };
}

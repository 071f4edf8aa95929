/**
 * What one configuration finds and another misses.
 *
 * Each configuration's answers are reduced to three lists of identified items: resolve candidates
 * (identified by target, Kind, Attribute and values), search results (by Record) and the context
 * pack's Records (seeds and neighbors, by Record). For every item the comparison says which other
 * configurations missed it and where they ranked it, and per configuration how many of its items no
 * other configuration has. A configuration whose call failed is left out of the comparison for that
 * call (it did not "miss" anything: it has no answer), and the page shows its problem instead.
 */

import type { Candidate, LabRun, Outcome, PackRecord, SearchHit } from "./types";

export interface Compared<T> {
  id: string;
  item: T;
  /** Its rank in this configuration's list (0 first). */
  rank: number;
  /** Indices of the configurations (with an answer) that do not have it. */
  missedBy: number[];
  /** Its rank in each configuration's list, null where missing or without an answer. */
  ranks: (number | null)[];
}

export interface Section<T> {
  /** Per configuration: its items, compared; null when its call failed. */
  lists: (Compared<T>[] | null)[];
  /** Per configuration: how many of its items some other configuration with an answer misses. */
  unique: number[];
  /** Ids found by every configuration with an answer. */
  common: string[];
}

export interface Comparison {
  candidates: Section<Candidate>;
  search: Section<SearchHit>;
  pack: Section<PackRecord & { section: "seed" | "neighbor" }>;
}

export function candidateId(candidate: Candidate): string {
  const values = candidate.values ? JSON.stringify(candidate.values) : "";
  return `${candidate.target}:${candidate.kind}.${candidate.attribute ?? ""}=${values}`;
}

/** Compare per configuration lists of items (null: no answer), identified by `idOf`. */
export function compareLists<T>(lists: (T[] | null)[], idOf: (item: T) => string): Section<T> {
  const indexes: (Map<string, number> | null)[] = lists.map((list) => {
    if (!list) return null;
    const index = new Map<string, number>();
    list.forEach((item, rank) => {
      const id = idOf(item);
      if (!index.has(id)) index.set(id, rank);
    });
    return index;
  });
  const answered = indexes.flatMap((index, i) => (index ? [i] : []));
  const compared = lists.map((list, i) => {
    if (!list) return null;
    const seen = new Set<string>();
    const out: Compared<T>[] = [];
    list.forEach((item, rank) => {
      const id = idOf(item);
      if (seen.has(id)) return;
      seen.add(id);
      const ranks = indexes.map((index) => (index ? (index.get(id) ?? null) : null));
      const missedBy = answered.filter((j) => j !== i && ranks[j] === null);
      out.push({ id, item, rank, missedBy, ranks });
    });
    return out;
  });
  const unique = compared.map((list) => (list ? list.filter((c) => c.missedBy.length > 0).length : 0));
  const first = answered.length ? compared[answered[0]!] : null;
  const common = first ? first.filter((c) => c.missedBy.length === 0).map((c) => c.id) : [];
  return { lists: compared, unique, common };
}

function valueOf<T>(outcome: Outcome<T> | undefined): T | null {
  return outcome && outcome.ok ? outcome.value : null;
}

export function compareRuns(runs: (LabRun | null)[]): Comparison {
  const candidates = runs.map((run) => valueOf(run?.resolve)?.candidates ?? null);
  const hits = runs.map((run) => valueOf(run?.search)?.results ?? null);
  const packs = runs.map((run) => {
    const pack = valueOf(run?.context);
    if (!pack) return null;
    return [
      ...pack.seeds.map((r) => ({ ...r, section: "seed" as const })),
      ...pack.neighbors.map((r) => ({ ...r, section: "neighbor" as const })),
    ];
  });
  return {
    candidates: compareLists(candidates, candidateId),
    search: compareLists(hits, (hit) => hit.ref),
    pack: compareLists(packs, (record) => record.ref),
  };
}

/** Token sections of the packs side by side: every section any pack reports, in a stable order. */
export function sectionRows(
  budgets: ({ sections: Record<string, number> } | null)[],
): { section: string; tokens: (number | null)[] }[] {
  const order = ["seeds", "neighbors", "links", "schema", "recent_changes", "lineage"];
  const names = new Set<string>();
  for (const budget of budgets) if (budget) for (const name of Object.keys(budget.sections)) names.add(name);
  const sorted = [...names].sort((a, b) => {
    const ia = order.indexOf(a);
    const ib = order.indexOf(b);
    return (ia < 0 ? order.length : ia) - (ib < 0 ? order.length : ib) || a.localeCompare(b);
  });
  return sorted.map((section) => ({
    section,
    tokens: budgets.map((budget) => (budget ? (budget.sections[section] ?? null) : null)),
  }));
}

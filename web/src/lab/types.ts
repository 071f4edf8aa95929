/**
 * The answers the retrieval lab reads, typed from docs/rest-reference.md (`ResolveResult`,
 * `SearchResults`, `ContextPack`); only the members the lab shows.
 */

export interface Candidate {
  target: "attribute" | "kind" | "value";
  kind: string;
  attribute?: string;
  type?: string;
  values?: unknown[];
  predicate?: { attr: string; op: "eq" | "in"; value: unknown };
  score: number;
  level: string;
  matched: string;
  records?: number;
}

export interface ResolveResult {
  revision: string;
  candidates: Candidate[];
  unmatched: string[];
  skipped: { level: string; reason: string }[];
  coverage?: { notes: string[]; unknown: string[] };
}

export interface SearchHit {
  ref: string;
  kind: string;
  key: string;
  title: string;
  score: number;
}

export interface SearchResults {
  revision: string;
  text: string;
  kinds: string[];
  results: SearchHit[];
  count: number;
}

export interface PackRecord {
  ref: string;
  title: string;
  depth?: number;
}

export interface Budget {
  limit_tokens: number;
  used_tokens: number;
  chars_per_token: number;
  sections: Record<string, number>;
  trimmed: string[];
  omitted: Record<string, number>;
  over_budget: boolean;
  capped: boolean;
}

export interface ContextPack {
  revision: string;
  seeds: PackRecord[];
  neighbors: PackRecord[];
  links: Record<string, { from: string; to: string }[]>;
  budget: Budget;
}

/** A problem the API answered instead (RFC 9457), kept per call so one failing call does not hide the others. */
export interface CallProblem {
  status: number;
  title: string;
  detail?: string;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; problem: CallProblem };

/** What one configuration got back. */
export interface LabRun {
  resolve: Outcome<ResolveResult>;
  search: Outcome<SearchResults>;
  context: Outcome<ContextPack>;
}

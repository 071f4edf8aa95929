/**
 * A retrieval-lab configuration: one way of asking the Domain about a question, and the three
 * request bodies it turns into (`POST .../resolve`, `POST .../search`, `POST .../context`).
 *
 * Only members the user set are sent, so the server's defaults (and the lens's, which win over the
 * settings) apply to the rest exactly as they would for an agent making the same call. The question
 * seeds the context pack through its `search` selector, so the pack starts from what search finds;
 * with a limit, the pack is seeded with the search's first `limit` Records instead (`refs`: the
 * context call has no search limit of its own, and its `search` selector would seed every match).
 */

export interface LabConfig {
  /** A short label shown above the column (A, B, ... when empty). */
  label: string;
  lens: string;
  traits: string[];
  /** Kinds for search and resolve. */
  kinds: string[];
  relations: string[];
  depth: number | null;
  budgetTokens: number | null;
  /** Search results wanted, and the context pack's seeds (the first ones found). */
  limit: number | null;
  includeSchema: boolean | null;
  includeRecentChanges: boolean | null;
  includeLineage: boolean | null;
  /** A query vector for search and resolve (numbers), when given. */
  queryVector: number[] | null;
}

export interface LabState {
  question: string;
  configs: LabConfig[];
}

export const MIN_CONFIGS = 2;
export const MAX_CONFIGS = 4;

export function emptyConfig(label = ""): LabConfig {
  return {
    label,
    lens: "",
    traits: [],
    kinds: [],
    relations: [],
    depth: null,
    budgetTokens: null,
    limit: null,
    includeSchema: null,
    includeRecentChanges: null,
    includeLineage: null,
    queryVector: null,
  };
}

export function defaultState(): LabState {
  return { question: "", configs: [emptyConfig(), emptyConfig()] };
}

/** The label of configuration i: its own, else A, B, C, D. */
export function labelOf(config: LabConfig, index: number): string {
  return config.label.trim() || String.fromCharCode(65 + index);
}

type Body = Record<string, unknown>;

function withBranch(body: Body, branch: string | undefined): Body {
  if (branch) body.branch = branch;
  return body;
}

export function resolveBody(question: string, config: LabConfig, branch?: string): Body {
  const body: Body = { text: question, record_misses: false };
  if (config.kinds.length) body.kinds = config.kinds;
  if (config.queryVector?.length) body.query_vector = config.queryVector;
  return withBranch(body, branch);
}

export function searchBody(question: string, config: LabConfig, branch?: string): Body {
  const body: Body = { text: question };
  if (config.kinds.length) body.kinds = config.kinds;
  if (config.traits.length) body.traits = config.traits;
  if (config.lens) body.lens = config.lens;
  if (config.limit !== null) body.limit = config.limit;
  if (config.queryVector?.length) body.query_vector = config.queryVector;
  return withBranch(body, branch);
}

/** The context call's body: seeded by `seeds` (the search's first Records, with a limit) when
 * given, else by the question through the `search` selector. */
export function contextBody(question: string, config: LabConfig, branch?: string, seeds?: string[]): Body {
  const body: Body = seeds ? { refs: seeds, format: "json" } : { search: question, format: "json" };
  if (config.lens) body.lens = config.lens;
  if (config.traits.length) body.traits = config.traits;
  if (config.relations.length) body.relations = config.relations;
  if (config.depth !== null) body.depth = config.depth;
  if (config.budgetTokens !== null) body.budget_tokens = config.budgetTokens;
  if (config.includeSchema !== null) body.include_schema = config.includeSchema;
  if (config.includeRecentChanges !== null) body.include_recent_changes = config.includeRecentChanges;
  if (config.includeLineage !== null) body.include_lineage = config.includeLineage;
  return withBranch(body, branch);
}

/** Parse "0.1, 0.2 0.3" into numbers; null when empty, an error message when not numbers. */
export function parseVector(text: string): number[] | null | string {
  const parts = text.split(/[\s,]+/).filter(Boolean);
  if (parts.length === 0) return null;
  const numbers = parts.map(Number);
  const bad = parts.find((_, i) => !Number.isFinite(numbers[i]));
  if (bad !== undefined) return `"${bad}" is not a number: write the vector as numbers separated by commas`;
  return numbers;
}

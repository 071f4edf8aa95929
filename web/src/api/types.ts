/**
 * The API's answers the app reads, typed by hand from /openapi.json and docs/rest-reference.md.
 * Only the members the screens use are required here; the rest of an answer is ignored.
 */

/** `POST|GET /api/v1/web/session`. */
export interface WebSession {
  principal: string;
  principal_type: string;
  admin: boolean;
  expires_at: string;
  csrf_token: string;
}

/** `GET /api/v1/domains`: the Domains the caller holds a grant in. */
export interface DomainList {
  domains: Array<{ name: string; default_branch: string }>;
}

/** A branch of a Domain (`GET .../branches`). */
export interface Branch {
  name: string;
  head: string;
  generation: number;
  default: boolean;
  protected: boolean;
  required_approvals: number;
  /** The branch it was forked from (null for the default branch). */
  from: string | null;
  mode: "copy" | "overlay";
  created_by: string;
  created_at: string;
}

export interface BranchList {
  domain: string;
  branches: Branch[];
}

// ---- Schema (`GET .../schema`) -------------------------------------------------------------------

export interface AttributeSpec {
  type: string;
  required: boolean;
  unique?: boolean;
  description: string;
  values?: string[];
  sensitivity?: string[];
  min?: number | string | null;
  max?: number | string | null;
}

export interface KindSpec {
  name: string;
  description: string;
  key: string[];
  title: string | null;
  aliases?: string[];
  implements?: string[];
  stewards?: string[];
  attributes: Record<string, AttributeSpec>;
}

export interface RelationSpec {
  name: string;
  from: string;
  to: string;
  inverse: string | null;
  cardinality: string;
  description: string;
  required_from?: boolean;
  attributes?: Record<string, AttributeSpec>;
}

export interface TraitSpec {
  name: string;
  description: string;
  attributes: Record<string, AttributeSpec>;
  kinds: string[];
}

export interface LensSpec {
  name: string;
  description: string;
  kinds: string[];
  traits: string[];
  relations: string[];
  depth: number | null;
}

export interface Schema {
  domain: string;
  branch: string;
  description: string;
  revision: string;
  kinds: KindSpec[];
  relations: RelationSpec[];
  traits: TraitSpec[];
  lenses: LensSpec[];
}

// ---- The change feed (`GET .../branches/{b}/changes`, and each `revision` event) -------------------

export interface Origin {
  type: string;
  ref: string;
}

/** A `revision.committed` event: one Revision with what it changed, per Kind and Relation. */
export interface RevisionEvent {
  sequence: number;
  type: string;
  domain: string;
  branch: string;
  revision: string;
  parents: string[];
  generation: number;
  author: string;
  message: string;
  origin: Origin;
  created_at: string;
  kinds: Record<string, number>;
  relations: Record<string, number>;
  keys?: Record<string, string[]>;
  keys_truncated?: boolean;
}

export interface ChangesPage {
  domain: string;
  branch: string;
  head: string;
  events: RevisionEvent[];
  next_since: string | null;
  more: boolean;
}

// ---- Health (`GET .../health`) --------------------------------------------------------------------

export interface HealthSummary {
  ok: boolean;
  kinds: number;
  records: number;
  links: number;
  invalid_records: number;
  orphan_links: number;
  required_gaps: number;
  duplicate_groups: number;
  stale_derived_kinds: number;
}

export interface Violations {
  rule: string;
  attribute: string;
  records: number;
  examples: string[];
}

export interface Duplicates {
  attribute: string;
  reason: "title" | "unique";
  records: number;
  keys: string[];
}

export interface KindHealth {
  kind: string;
  records: number;
  last_change: string;
  checked: number;
  sampled: boolean;
  invalid: number;
  violations: Violations[];
  duplicate_groups: number;
  duplicates: Duplicates[];
  derived: number | null;
}

export interface RelationHealth {
  relation: string;
  from: string;
  to: string;
  links: number;
  orphans: number;
  orphan_examples: string[];
  required_from: boolean;
  gaps?: number;
  gap_examples?: string[];
}

export interface DataHealth {
  domain: string;
  branch: string;
  revision: string;
  summary: HealthSummary;
  kinds: KindHealth[];
  relations: RelationHealth[];
}

// ---- Queries, resolve and coverage ---------------------------------------------------------------

export type Values = Record<string, unknown>;

export interface RecordEntry {
  ref: string;
  kind: string;
  key: string;
  title: string | null;
  values: Values;
}

export interface CoverageKind {
  kind: string;
  records: number;
  as_of: string;
  approximate: boolean;
}

export interface CoverageAttribute {
  kind: string;
  attribute: string;
  missing: number;
  missing_records: number;
  used_in: string[];
}

export interface Coverage {
  kinds: CoverageKind[];
  attributes: CoverageAttribute[];
  sources: unknown[];
  notes: string[];
}

export interface AggregateGroup {
  value: unknown;
  count: number;
}

export interface QueryResult {
  domain: string;
  branch: string;
  revision: string;
  kind?: string;
  trait?: string;
  records?: RecordEntry[];
  count?: number;
  next_cursor?: string | null;
  aggregate?: { count: number; group_by?: string; groups?: AggregateGroup[] };
  coverage?: Coverage;
}

export interface Predicate {
  attr: string;
  op: string;
  value?: unknown;
}

export interface Candidate {
  target: string;
  kind?: string;
  attribute?: string;
  type?: string;
  values?: string[];
  predicate?: Predicate;
  score: number;
  level: string;
  matched: string;
  records?: number;
}

export interface ResolveResult {
  revision: string;
  candidates: Candidate[];
  unmatched: string[];
  coverage: { kinds: string[]; unknown: string[]; sources: unknown[]; notes: string[] };
}

// ---- One Record -----------------------------------------------------------------------------------

export interface RecordView extends RecordEntry {
  domain: string;
  branch: string;
  revision: string;
  updated_revision: string;
  /** Link counts per Relation name (forward or inverse), with `links=true`. */
  links?: Record<string, number>;
}

export interface HistoryChange {
  revision: string;
  at: string;
  author: string;
  message: string;
  origin: Origin;
  change: "created" | "modified" | "deleted" | string;
  attributes: string[];
  /** With `values=true`: the values before (null when created) and after (null when deleted). */
  before?: Values | null;
  after?: Values | null;
}

export interface HistoryPage {
  revision: string;
  ref: string;
  changes: HistoryChange[];
  next_cursor: string | null;
}

export interface AttributeLineage {
  name: string;
  value: unknown;
  revision: string;
  origin: Origin;
  actor: string;
  at: string;
  message: string;
  operation?: { name: string; invocation_id: string };
  import?: { source: string };
  proposal?: string | null;
}

export interface ExplainLink {
  relation: string;
  from: string;
  to: string;
  revision: string;
}

export interface Explanation {
  revision: string;
  ref: string;
  title: string | null;
  changes: number;
  changes_truncated: boolean;
  created: { revision: string; at: string; author: string; origin: Origin; message: string } | null;
  attributes: AttributeLineage[];
  links: ExplainLink[];
  links_truncated: boolean;
  proposals: unknown[];
}

export interface ContextBudget {
  limit_tokens: number;
  used_tokens: number;
  sections: Record<string, number>;
  trimmed: unknown[];
  omitted: Record<string, unknown>;
  over_budget: boolean;
  capped: boolean;
}

export interface ContextPack {
  revision: string;
  seeds: Array<{ ref: string; title: string | null; values: Values }>;
  neighbors: Array<{ ref: string; title: string | null; depth: number; values: Values }>;
  links: Record<string, Array<{ from: string; to: string; values?: Values }>>;
  budget: ContextBudget;
  [section: string]: unknown;
}

// ---- Diffs ----------------------------------------------------------------------------------------

export interface DiffEntry {
  ref: string;
  values: Values;
}

export interface DiffChange {
  ref: string;
  attributes: string[];
  before: Values;
  after: Values;
}

export interface DiffSection {
  added: DiffEntry[];
  removed: DiffEntry[];
  changed: DiffChange[];
}

export interface DiffResult {
  branch: string;
  from: string;
  to: string;
  revision: string;
  records: DiffSection;
  links: DiffSection;
}

// ---- Proposals ------------------------------------------------------------------------------------

export interface NextStep {
  action: string;
  detail: string;
  method: string;
  href: string;
  permission?: string;
}

export interface Review {
  reviewer: string;
  decision: "approve" | "request_changes";
  comment: string | null;
  at: string;
}

export interface Proposal {
  id: string;
  domain: string;
  title: string;
  description: string;
  status: "open" | "merged" | "closed";
  author: string;
  source_ref: string;
  target_ref: string;
  task: string | null;
  intent: string | null;
  kinds: string[];
  stewards: string[];
  executions: Array<{ invocation_id: string; operation: string; revision: string | null; principal: string; at: string }>;
  approval: { required: number; approvals: number; satisfied: boolean };
  reviews: Review[];
  conflicts: { open: number; resolved: number };
  attempt: { id: string; result: string; open_conflicts: number; resolved_conflicts: number; at: string } | null;
  merge: { mergeable: boolean; blockers: string[] };
  merged_revision: string | null;
  merged_by: string | null;
  merged_at: string | null;
  closed_by: string | null;
  closed_at: string | null;
  created_at: string;
  updated_at: string;
  next: NextStep[];
  branch_deleted?: boolean;
}

export interface ProposalList {
  proposals: Proposal[];
  next_cursor: string | null;
}

export interface Conflict {
  id: string;
  code: string;
  entity: "record" | "link";
  ref: string;
  kind?: string;
  relation?: string;
  key: string;
  attribute: string | null;
  base: unknown;
  ours: unknown;
  theirs: unknown;
  redacted?: true;
  status: "open" | "resolved";
  resolution: { choice: "ours" | "theirs" | "value"; value?: unknown } | null;
  resolved_by: string | null;
  resolved_at: string | null;
}

export interface ConflictList {
  proposal: string;
  status: string;
  conflicts: Conflict[];
}

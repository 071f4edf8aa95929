/**
 * The API's answers the app reads. Most are the schemas of the served /openapi.json, generated into
 * openapi.d.ts (scripts/gen_web_types.py, `make docs`; a stale file fails
 * tests/unit/test_web_api_types.py) and named here; those the document does not describe as the
 * screens read them stay written by hand below.
 */
import type { components } from "./openapi";

type Schemas = components["schemas"];

/** `POST|GET /api/v1/web/session`. */
export type WebSession = Schemas["WebSession"];

/** `GET /api/v1/domains`: the Domains the caller holds a grant in. */
export type DomainList = Schemas["DomainList"];

/** A branch of a Domain (`GET .../branches`). */
export type Branch = Schemas["Branch"];

export type BranchList = Schemas["BranchList"];

/** `POST .../neighborhood`: the Records around some Records and the Links between them. */
export type Neighborhood = Schemas["Neighborhood"];

// ---- Schema (`GET .../schema`) -------------------------------------------------------------------

export type AttributeSpec = Schemas["AttributeDoc"];

export type KindSpec = Schemas["KindDoc"];

export type RelationSpec = Schemas["RelationDoc"];

export type TraitSpec = Schemas["TraitDoc"];

export type LensSpec = Schemas["LensDoc"];

export type Schema = Schemas["SchemaView"];

// ---- The change feed (`GET .../branches/{b}/changes`, and each `revision` event) -------------------

export type Origin = Schemas["Origin"];

/** A `revision.committed` event: one Revision with what it changed, per Kind and Relation. */
export type RevisionEvent = Schemas["RevisionEvent"];

/** `GET .../revisions/{revision}`: one Revision, a page of what it changed, its schema changes. */
export type RevisionView = Schemas["RevisionView"];

export type RevisionDoc = Schemas["RevisionDoc"];

export type ChangesPage = Schemas["ChangesPage"];

// ---- Health (`GET .../health`) --------------------------------------------------------------------

export type HealthSummary = Schemas["HealthSummary"];

export type Violations = Schemas["Violations"];

export type Duplicates = Schemas["Duplicates"];

export type KindHealth = Schemas["KindHealth"];

export type RelationHealth = Schemas["RelationHealth"];

export type DataHealth = Schemas["DataHealth"];

// ---- Queries, resolve and coverage ---------------------------------------------------------------

export type Values = Record<string, unknown>;

export type RecordEntry = Schemas["RecordEntry"];

export type CoverageKind = Schemas["KindCoverage"];

export type CoverageAttribute = Schemas["AttributeCoverage"];

export type Coverage = Schemas["QueryCoverage"];

export type AggregateGroup = Schemas["Group"];

export type QueryResult = Schemas["QueryResult"];

export type Predicate = Schemas["Predicate"];

export type Candidate = Schemas["Candidate"];

export type ResolveResult = Schemas["ResolveResult"];

// ---- One Record -----------------------------------------------------------------------------------

export type RecordView = Schemas["RecordView"];

export type HistoryChange = Schemas["HistoryChange"];

export type HistoryPage = Schemas["HistoryPage"];

export type AttributeLineage = Schemas["AttributeLineage"];

export interface ExplainLink {
  relation: string;
  from: string;
  to: string;
  revision: string;
}

export type Explanation = Schemas["Explanation"];

export type ContextBudget = Schemas["Budget"];

export type ContextPack = Schemas["ContextPack"];

// ---- Diffs ----------------------------------------------------------------------------------------

export type DiffEntry = Schemas["DiffEntry"];

export type DiffChange = Schemas["DiffChange"];

export type DiffSection = Schemas["DiffSection"];

export type DiffResult = Schemas["DiffResult"];

// ---- Proposals ------------------------------------------------------------------------------------

export type NextStep = Schemas["Next"];

export type Review = Schemas["ReviewDoc"];

export type Proposal = Schemas["ProposalDoc"];

export type ProposalList = Schemas["ProposalList"];

export type Conflict = Schemas["Conflict"];

export type ConflictList = Schemas["ConflictList"];

// ---- Schema changes (`POST .../branches/{b}/schema/changes`) ---------------------------------------

/** One change of a change set (`add_attribute`, `rename_kind`...). */
export type SchemaChangeItem = Schemas["SchemaChangeItem"];

/** What a change set did or, with `dry_run`, would do: writes, violations, what else it touches. */
export type SchemaChangeResult = Schemas["SchemaChange"];

/** What a Revision changed in the schema, with the change set it applied. */
export type RevisionSchemaDiff = Schemas["SchemaDiff"];

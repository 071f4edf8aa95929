/**
 * The agent trace as the REST API answers it (`GET /api/v1/sessions`, `GET /api/v1/sessions/{session}`),
 * typed for the replay: the schemas of the served /openapi.json (../api/openapi.d.ts, generated), and
 * the part of a Record answer the replay shows.
 */
import type { components } from "../api/openapi";

type Schemas = components["schemas"];

/** A Link a step touched: its Relation and both ends as `Kind/key` references. */
export type TouchedLink = Schemas["TouchedLink"];

/** A call made with the session's id. */
export type SessionStep = Schemas["SessionStep"];

/** A note the agent attached to its session. */
export type SessionNote = Schemas["SessionNote"];

export type SessionEntry = SessionStep | SessionNote;

/** `GET /api/v1/sessions/{session}`: the entries in order. */
export type Session = Schemas["Session"];

/** One row of `GET /api/v1/sessions`. */
export type SessionSummary = Schemas["SessionSummary"];

/** `GET /api/v1/sessions`: newest `last_at` first, keyset paginated by `next`. */
export type SessionList = Schemas["SessionList"];

/** The part of a Record answer (`RecordView`) the replay shows. */
export interface RecordAsOf {
  ref: string;
  kind: string;
  key: string;
  title: string;
  values: Record<string, unknown>;
  revision: string;
  updated_revision: string;
  redacted?: string[];
}

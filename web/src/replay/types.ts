/**
 * The agent trace as the REST API answers it (`GET /api/v1/sessions`, `GET /api/v1/sessions/{session}`),
 * typed for the replay. Hand-written from docs/rest-reference.md (`Session`, `SessionStep`,
 * `SessionNote`) and the websession brief (the sessions list and `touched_links`).
 */

/** A Link a step touched: its Relation and both ends as `Kind/key` references. */
export interface TouchedLink {
  relation: string;
  from: string;
  to: string;
}

/** A call made with the session's id. */
export interface SessionStep {
  kind: "step";
  id: number;
  at: string;
  principal: string;
  domain?: string;
  /** The RPC the call made (GetRecord, Query...). */
  call: string;
  status: number;
  latency_ms: number;
  counts: Record<string, number>;
  request: Record<string, unknown>;
  /** Records (`Kind/key`) the answer named. */
  touched: string[];
  /** Links the answer named (added by the sessions work of issue 14; absent on older servers). */
  touched_links?: TouchedLink[];
  /** The Revision the answer named: the one the step read (or a write made). */
  revision?: string;
  /** A write's step: the Revisions it made, the branch they are on, the Records they changed and
   * the Proposal it opened or added to (absent on steps kept before these were recorded). */
  revisions?: string[];
  branch?: string;
  changed?: Array<{ ref: string; change: string }>;
  proposal?: string;
  /** The size of the answer's body. */
  bytes?: number;
  /** A refused call: the problem it was answered. */
  problem?: { code: string; title: string; detail: string };
}

/** A note the agent attached to its session. */
export interface SessionNote {
  kind: "note";
  id: number;
  at: string;
  principal: string;
  domain?: string;
  text: string;
}

export type SessionEntry = SessionStep | SessionNote;

/** `GET /api/v1/sessions/{session}`: the entries in order. */
export interface Session {
  session: string;
  entries: SessionEntry[];
  steps: number;
}

/** One row of `GET /api/v1/sessions`. */
export interface SessionSummary {
  session: string;
  principal: string;
  domains: string[];
  started_at: string;
  last_at: string;
  steps: number;
  errors: number;
  notes: number;
}

/** `GET /api/v1/sessions`: newest `last_at` first, keyset paginated by `next`. */
export interface SessionList {
  sessions: SessionSummary[];
  next: string | null;
}

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

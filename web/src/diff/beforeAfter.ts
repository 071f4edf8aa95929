/**
 * Before/after rows of a change, for the Record history and a Proposal's diff: one row per
 * Attribute the change names, with the value before and after and how it changed. Values are the
 * API's canonical forms (integers and decimals as strings), compared as JSON.
 */
import type { DiffChange, DiffResult, HistoryChange, Values } from "../api/types";
import { splitRef } from "../shell/format";

export type RowChange = "added" | "removed" | "changed" | "unchanged";

export interface BeforeAfterRow {
  attribute: string;
  before: unknown;
  after: unknown;
  change: RowChange;
}

type MaybeValues = Values | null | undefined;

const has = (values: MaybeValues, name: string) =>
  values !== undefined && values !== null && Object.prototype.hasOwnProperty.call(values, name) && values[name] !== null;

export function rowChange(before: MaybeValues, after: MaybeValues, name: string): RowChange {
  const was = has(before, name);
  const is = has(after, name);
  if (!was && is) return "added";
  if (was && !is) return "removed";
  if (JSON.stringify(before?.[name]) === JSON.stringify(after?.[name])) return "unchanged";
  return "changed";
}

/** Rows for the Attributes a change names (in its order), else every Attribute either side holds. */
export function beforeAfterRows(
  attributes: string[] | undefined,
  before: MaybeValues,
  after: MaybeValues,
): BeforeAfterRow[] {
  const names =
    attributes && attributes.length
      ? attributes
      : [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])].sort();
  return names.map((attribute) => ({
    attribute,
    before: before?.[attribute] ?? null,
    after: after?.[attribute] ?? null,
    change: rowChange(before, after, attribute),
  }));
}

/** The rows of one history entry (`values=true` gives before/after). */
export const historyRows = (change: HistoryChange): BeforeAfterRow[] =>
  beforeAfterRows(change.attributes, change.before, change.after);

export interface RecordDiff {
  ref: string;
  kind: string;
  key: string;
  change: "added" | "removed" | "changed";
  rows: BeforeAfterRow[];
}

/** A diff's Records, Record by Record (sorted by reference), each with its before/after rows. */
export function recordDiffs(diff: DiffResult): RecordDiff[] {
  const entry = (ref: string, change: RecordDiff["change"], rows: BeforeAfterRow[]): RecordDiff => {
    const parts = splitRef(ref) ?? { kind: "", key: ref };
    return { ref, kind: parts.kind, key: parts.key, change, rows };
  };
  const out: RecordDiff[] = [
    ...diff.records.added.map((e) => entry(e.ref, "added", beforeAfterRows(undefined, undefined, e.values))),
    ...diff.records.removed.map((e) => entry(e.ref, "removed", beforeAfterRows(undefined, e.values, undefined))),
    ...diff.records.changed.map((c: DiffChange) => entry(c.ref, "changed", beforeAfterRows(c.attributes, c.before, c.after))),
  ];
  return out.sort((a, b) => a.ref.localeCompare(b.ref));
}

/**
 * A range of Revisions' schema change, read for a reviewer: the schema at both ends
 * (`GET .../schema?at=`), the change sets the range's Revisions applied (`GET .../revisions/{r}`,
 * `schema.changes`), the element-by-element diff, and, against a target branch, where the target
 * stands (three-way, from the same base) and a preview: the change sets re-run there as a `dry_run`
 * (`POST .../branches/{target}/schema/changes`: what the migration would write, which Records and
 * Links would violate, what else it touches). Nothing is written. The preview needs `schema.change`
 * on the target; without it the reviewer sees the diff and what the Revisions say, and why.
 */
import { getRevision, getSchema, previewSchemaChanges } from "../api/domain";
import { ApiProblem } from "../api/problem";
import type { Schema, SchemaChangeItem, SchemaChangeResult } from "../api/types";
import { againstTarget, diffSchemas, type ElementDiff, type TargetStanding } from "./schemaDiff";

/** A branch's Revisions after `from` up to `to` (`from` an ancestor of `to` on its first parents). */
export interface SchemaRange {
  branch: string;
  from: string;
  to: string;
}

/** Revisions read back from `to` at most. */
const MAX_REVISIONS = 200;

export interface TargetView {
  branch: string;
  /** Where each proposed element (`section:name`) stands on the target since the base. */
  standing: Map<string, TargetStanding>;
  /** The target already stands on the proposed schema (nothing left to migrate there). */
  alreadyThere: boolean;
  /** The target's head is still the base: the merge is a fast-forward onto the proposed Revision.
   * Otherwise the merge is three-way and asks for the change sets on the target first (409
   * `schema-conflict`), which is what the preview runs. */
  fastForward: boolean;
  preview: SchemaChangeResult | null;
  /** Why there is no preview: the API's problem (403 without `schema.change`, 422 when the change
   * sets do not apply to the target as it is). */
  previewError: unknown;
}

export interface SchemaChangesView {
  before: Schema;
  after: Schema;
  /** The range's change sets, oldest first, as one list. */
  changes: SchemaChangeItem[];
  /** `clear` when every change set was sent with `on_invalid: clear` (the merge replays them so). */
  onInvalid: "refuse" | "clear";
  /** Schema-changing Revisions whose change set is not kept (a merge; before migration 0019). */
  unkept: number;
  /** A change came without its backfill or map (values the reader is not cleared for): no preview. */
  withheld: boolean;
  elements: ElementDiff[];
  target: TargetView | null;
}

/** The change sets of the range's Revisions, oldest first, and how many changed the schema without one. */
export async function changeSetsIn(domain: string, range: SchemaRange): Promise<{ changes: SchemaChangeItem[]; unkept: number; onInvalid: "refuse" | "clear" }> {
  const sets: SchemaChangeItem[][] = [];
  let unkept = 0;
  let cleared = 0;
  let revision = range.to;
  let read = 0;
  for (; read < MAX_REVISIONS && revision && revision !== range.from; read++) {
    const view = await getRevision(domain, range.branch, revision, 1);
    if (view.revision.id === range.from || view.revision.id.startsWith(range.from)) break;
    if (view.schema) {
      if (view.schema.changes.length > 0) {
        sets.unshift(view.schema.changes as SchemaChangeItem[]);
        if (view.schema.on_invalid === "clear") cleared += 1;
      } else unkept += 1;
    }
    revision = view.revision.parents[0] ?? "";
  }
  // Past the limit the older change sets are unknown: counted as one not kept (no preview).
  if (read === MAX_REVISIONS && revision && revision !== range.from) unkept += 1;
  return { changes: sets.flat(), unkept, onInvalid: sets.length > 0 && cleared === sets.length ? "clear" : "refuse" };
}

async function onTarget(domain: string, before: Schema, after: Schema, elements: ElementDiff[], changes: SchemaChangeItem[], unkept: number, target: string, onInvalid: "refuse" | "clear"): Promise<TargetView> {
  const now = await getSchema(domain, target);
  const alreadyThere = now.schema_version === after.schema_version;
  const theirs = now.schema_version === before.schema_version || alreadyThere ? [] : diffSchemas(before, now);
  const fastForward = now.revision === before.revision;
  const view: TargetView = { branch: target, standing: againstTarget(elements, theirs), alreadyThere, fastForward, preview: null, previewError: null };
  if (alreadyThere || changes.length === 0 || unkept > 0 || changes.some((c) => "withheld" in c)) return view;
  try {
    view.preview = await previewSchemaChanges(domain, target, changes, onInvalid);
  } catch (problem) {
    view.previewError = problem;
  }
  return view;
}

/** The range's schema change, or null when both ends stand on the same schema version. */
export async function loadSchemaChanges(domain: string, range: SchemaRange, target?: string): Promise<SchemaChangesView | null> {
  const [before, after] = await Promise.all([getSchema(domain, range.branch, range.from), getSchema(domain, range.branch, range.to)]);
  if (before.schema_version === after.schema_version) return null;
  const { changes, unkept, onInvalid } = await changeSetsIn(domain, range);
  const elements = diffSchemas(before, after, changes);
  const view = target ? await onTarget(domain, before, after, elements, changes, unkept, target, onInvalid) : null;
  return { before, after, changes, onInvalid, unkept, withheld: changes.some((c) => "withheld" in c), elements, target: view };
}

/** Whether merging is safe as far as the schema goes, and why not, in sentences. */
export function verdict(target: TargetView): string[] {
  const reasons: string[] = [];
  const conflicts = [...target.standing.entries()].filter(([, s]) => s === "conflict").map(([name]) => name.split(":").slice(1).join(":"));
  if (conflicts.length) reasons.push(`${target.branch} changed ${conflicts.join(", ")} differently since the base: the merge lists ${conflicts.length === 1 ? "a schema Conflict" : "schema Conflicts"} to resolve.`);
  if (target.preview && target.preview.violation_count > 0) reasons.push(`${target.preview.violation_count} Records or Links on ${target.branch} would violate the new schema.`);
  if (target.previewError && !(target.previewError instanceof ApiProblem && target.previewError.status === 403)) reasons.push(`The change sets do not apply to ${target.branch} as it is now.`);
  if (!target.fastForward && !target.alreadyThere) reasons.push(`${target.branch} moved since the base, so the merge is three-way: it answers schema-conflict until these change sets are applied to ${target.branch} (the preview below is what that would do).`);
  return reasons;
}

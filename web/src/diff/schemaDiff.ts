/**
 * A schema change as a reader checks it: each element of the schema (a Kind, an Attribute, a
 * Relation, a Trait, an Operation, a lens, a Source) added, removed, renamed or changed from one
 * schema (`GET .../schema?at=`, the base) to another (the proposed), with the members that differ.
 *
 * Two schemas alone cannot tell a rename from a removal and an addition; the change sets do
 * (`GET .../revisions/{revision}` answers the one a Revision applied in `schema.changes`): their
 * `rename_kind`, `rename_attribute` and `rename_relation` pair a proposed name with its base name.
 *
 * `againstTarget` is the three-way check a reviewer needs before a merge: each element the proposal
 * changes that the target also changed since the base, the same way (no Conflict) or not (the merge
 * lists a `schema_conflict` on it, docs/schema.md "Branches, Proposals and merges").
 */
import type { Schema, SchemaChangeItem, SchemaChangeResult } from "../api/types";

export type SchemaSection = "Kind" | "Attribute" | "Relation" | "Trait" | "Operation" | "lens" | "Source";

export type ElementChange = "added" | "removed" | "renamed" | "changed";

/** One member of an element that differs (absent on one side: undefined). A list of texts also
 * says which entries it gains and loses (a wider enum: `added: ["terminated"]`). */
export interface MemberDiff {
  member: string;
  before: unknown;
  after: unknown;
  added?: string[];
  removed?: string[];
}

export interface ElementDiff {
  section: SchemaSection;
  /** The proposed name (`Kind.attribute` for an Attribute); the base name when removed. */
  name: string;
  /** The base name of a renamed element. */
  was?: string;
  /** The name at the base (the proposed name when added; a renamed Kind's Attributes too). */
  base: string;
  change: ElementChange;
  members: MemberDiff[];
  /** The element's definition on the proposed side without its name (null: removed), to compare
   * with the target's. */
  definition: unknown;
}

/** Proposed name → base name, for what the change sets renamed (Attributes keyed by base Kind). */
export interface Renames {
  kinds: Map<string, string>;
  relations: Map<string, string>;
  attributes: Map<string, Map<string, string>>;
}

/** The renames of change sets applied in order (a name renamed twice maps to its first name). */
export function renamesOf(changes: SchemaChangeItem[]): Renames {
  const renames: Renames = { kinds: new Map(), relations: new Map(), attributes: new Map() };
  const move = (names: Map<string, string>, from: string, to: string) => {
    const base = names.get(from) ?? from;
    names.delete(from);
    names.set(to, base);
  };
  for (const change of changes) {
    if (!change.to) continue;
    if (change.op === "rename_kind" && change.kind) move(renames.kinds, change.kind, change.to);
    else if (change.op === "rename_relation" && change.relation) move(renames.relations, change.relation, change.to);
    else if (change.op === "rename_attribute" && change.kind && change.attribute) {
      const kind = renames.kinds.get(change.kind) ?? change.kind;
      const names = renames.attributes.get(kind) ?? new Map<string, string>();
      move(names, change.attribute, change.to);
      renames.attributes.set(kind, names);
    }
  }
  return renames;
}

const json = (value: unknown) => JSON.stringify(value ?? null);

const isTextList = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === "string");

/** Nothing to show: absent, null, an empty list or an empty object (the API's normal form of "none"). */
const empty = (value: unknown) =>
  value === undefined || value === null || (Array.isArray(value) && value.length === 0) || (typeof value === "object" && Object.keys(value as object).length === 0);

/** The members of two definitions that differ, in the proposed definition's order (of a new
 * element, those it declares: not its false and empty defaults). */
export function memberDiffs(before: Record<string, unknown> | null, after: Record<string, unknown> | null, skip: readonly string[] = []): MemberDiff[] {
  const names = [...Object.keys(after ?? {}), ...Object.keys(before ?? {}).filter((n) => !(after && n in after))];
  const diffs: MemberDiff[] = [];
  for (const member of names) {
    if (skip.includes(member)) continue;
    const was = before?.[member];
    const is = after?.[member];
    if (json(was) === json(is) || (empty(was) && empty(is))) continue;
    if (before === null && (is === false || is === "")) continue; // a new element: what it declares
    const diff: MemberDiff = { member, before: was, after: is };
    if ((isTextList(was) || empty(was)) && (isTextList(is) || empty(is))) {
      const old = new Set(isTextList(was) ? was : []);
      const now = new Set(isTextList(is) ? is : []);
      diff.added = [...now].filter((v) => !old.has(v));
      diff.removed = [...old].filter((v) => !now.has(v));
    }
    diffs.push(diff);
  }
  return diffs;
}

type Named = Record<string, Record<string, unknown>>;

const byName = (items: ReadonlyArray<{ name: string }>): Named => Object.fromEntries(items.map((i) => [i.name, i as unknown as Record<string, unknown>]));

/** One section's elements compared by name (the proposed name mapped to its base name). */
function compare(
  section: SchemaSection,
  before: Named,
  after: Named,
  baseOf: (name: string) => string,
  label: { before: (n: string) => string; after: (n: string) => string } = { before: (n) => n, after: (n) => n },
  skip: readonly string[] = [],
): ElementDiff[] {
  const out: ElementDiff[] = [];
  const matched = new Set<string>();
  const bare = (definition: Record<string, unknown>) => Object.fromEntries(Object.entries(definition).filter(([k]) => k !== "name" && !skip.includes(k)));
  for (const [name, definition] of Object.entries(after)) {
    const base = baseOf(name);
    const old = Object.prototype.hasOwnProperty.call(before, base) ? before[base] : undefined;
    const shown = label.after(name);
    if (old === undefined) {
      out.push({ section, name: shown, base: shown, change: "added", members: memberDiffs(null, definition, ["name", ...skip]), definition: bare(definition) });
      continue;
    }
    matched.add(base);
    const members = memberDiffs(old, definition, ["name", ...skip]);
    const element = { section, name: shown, base: label.before(base), members, definition: bare(definition) };
    if (base !== name) out.push({ ...element, was: label.before(base), change: "renamed" });
    else if (members.length > 0) out.push({ ...element, change: "changed" });
  }
  for (const name of Object.keys(before)) {
    if (!matched.has(name)) out.push({ section, name: label.before(name), base: label.before(name), change: "removed", members: [], definition: null });
  }
  return out;
}

/** What changed from the base schema to the proposed one, element by element. */
export function diffSchemas(before: Schema, after: Schema, changes: SchemaChangeItem[] = []): ElementDiff[] {
  const renames = renamesOf(changes);
  const kindBase = (name: string) => renames.kinds.get(name) ?? name;
  const beforeKinds = byName(before.kinds);
  const afterKinds = byName(after.kinds);
  const out: ElementDiff[] = compare("Kind", beforeKinds, afterKinds, kindBase, undefined, ["attributes"]);
  for (const kind of after.kinds) {
    const base = kindBase(kind.name);
    const old = before.kinds.find((k) => k.name === base);
    if (!old) continue; // a new Kind: its Attributes come with it
    const attributeBase = (name: string) => renames.attributes.get(base)?.get(name) ?? name;
    const label = { before: (n: string) => `${base}.${n}`, after: (n: string) => `${kind.name}.${n}` };
    out.push(...compare("Attribute", old.attributes as Named, kind.attributes as Named, attributeBase, label));
  }
  out.push(...compare("Relation", byName(before.relations), byName(after.relations), (n) => renames.relations.get(n) ?? n));
  out.push(...compare("Trait", byName(before.traits), byName(after.traits), (n) => n, undefined, ["kinds"]));
  out.push(...compare("Operation", byName(before.operations), byName(after.operations), (n) => n));
  out.push(...compare("lens", byName(before.lenses), byName(after.lenses), (n) => n));
  out.push(...compare("Source", byName(before.sources), byName(after.sources), (n) => n));
  return out;
}

/** Where an element of the proposal stands on the target since the base: not changed there; changed
 * there the same way; changed there apart (one side its name, the other its definition: both hold);
 * or changed differently (a `schema_conflict` the merge will list). */
export type TargetStanding = "unchanged" | "same" | "apart" | "conflict";

const changesDefinition = (e: ElementDiff) => e.change === "added" || e.change === "changed" || (e.change === "renamed" && e.members.length > 0);

/** For each proposed element (by `section:name`), whether the target changed it since the base too,
 * the way the merge compares them (docs/schema.md: element by element, a removal against a change
 * is a Conflict). The target's own renames are not known here (only the proposal's change sets are
 * read), so an element the target renamed counts as removed there. */
export function againstTarget(proposed: ElementDiff[], onTarget: ElementDiff[]): Map<string, TargetStanding> {
  const target = new Map<string, ElementDiff>();
  for (const e of onTarget) target.set(`${e.section}:${e.base}`, e);
  const standing = new Map<string, TargetStanding>();
  for (const e of proposed) {
    const theirs = target.get(`${e.section}:${e.base}`);
    let verdict: TargetStanding;
    if (!theirs) verdict = "unchanged";
    else if (e.change === "removed" || theirs.change === "removed") verdict = e.change === theirs.change ? "same" : "conflict";
    else if (theirs.name === e.name && json(theirs.definition) === json(e.definition)) verdict = "same";
    else if (e.change === "renamed" && theirs.change === "renamed" && theirs.name !== e.name) verdict = "conflict";
    else if (changesDefinition(e) && changesDefinition(theirs) && json(theirs.definition) !== json(e.definition)) verdict = "conflict";
    else verdict = "apart";
    standing.set(`${e.section}:${e.name}`, verdict);
  }
  return standing;
}

/** How many values the migration writes for an element (an Attribute's `Kind.attribute`), or
 * undefined when the preview does not name it. */
export function writesFor(element: ElementDiff, preview: SchemaChangeResult | null | undefined): number | undefined {
  if (!preview?.writes || element.section !== "Attribute") return undefined;
  return preview.writes.counts[element.name] ?? 0;
}

/** The values an element writes, read as a sentence ("writes 30 values", "moves its values"). */
export function writesText(element: ElementDiff, count: number | undefined): string {
  if (count === undefined) return "—";
  if (count > 0) return `writes ${count} value${count === 1 ? "" : "s"}`;
  return element.change === "renamed" ? "moves its values, writes none" : "writes none";
}

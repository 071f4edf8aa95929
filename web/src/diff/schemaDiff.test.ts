import { describe, expect, it } from "vitest";
import type { AttributeSpec, KindSpec, Schema, SchemaChangeItem, SchemaChangeResult } from "../api/types";
import { againstTarget, diffSchemas, memberDiffs, renamesOf, writesFor, writesText } from "./schemaDiff";

const attribute = (type: string, more: Partial<AttributeSpec> = {}): AttributeSpec => ({
  type,
  required: false,
  unique: false,
  pattern: null,
  min: null,
  max: null,
  description: "",
  aliases: [],
  value_aliases: {},
  resolvable: null,
  sensitivity: [],
  ...more,
});

const kind = (name: string, attributes: Record<string, AttributeSpec>, more: Partial<KindSpec> = {}): KindSpec => ({
  name,
  description: "",
  key: Object.keys(attributes).slice(0, 1),
  title: null,
  aliases: [],
  implements: [],
  stewards: [],
  attributes,
  ...more,
});

const schema = (kinds: KindSpec[], more: Partial<Schema> = {}): Schema => ({
  domain: "supply",
  branch: "main",
  description: "",
  kinds,
  relations: [],
  traits: [],
  lenses: [],
  operations: [],
  sources: [],
  revision: null,
  ...more,
});

const supplier = (attributes: Record<string, AttributeSpec>) => kind("Supplier", { code: attribute("string", { required: true }), ...attributes });
const contract = (values: string[]) => kind("Contract", { number: attribute("string"), status: attribute("enum", { values }) });

const base = schema([supplier({ tier: attribute("integer", { min: 1, max: 3 }), legacy: attribute("string") }), contract(["active", "expired"])]);

const changes: SchemaChangeItem[] = [
  { op: "add_attribute", kind: "Supplier", attribute: "certification", definition: { type: "enum", values: ["none", "iso9001"] }, backfill: { value: "none" } },
  { op: "rename_attribute", kind: "Supplier", attribute: "tier", to: "supplier_tier" },
  { op: "remove_attribute", kind: "Supplier", attribute: "legacy" },
  { op: "change_attribute", kind: "Contract", attribute: "status", definition: { values: ["active", "expired", "terminated"] } },
];

const proposed = schema([
  supplier({ supplier_tier: attribute("integer", { min: 1, max: 3 }), certification: attribute("enum", { values: ["none", "iso9001"] }) }),
  contract(["active", "expired", "terminated"]),
]);

describe("a schema diff, element by element", () => {
  it("names each element added, renamed, removed and changed, with the members that differ", () => {
    const diff = diffSchemas(base, proposed, changes);
    const by = (name: string) => diff.find((e) => e.name === name);
    expect(diff.map((e) => [e.section, e.change, e.name])).toEqual([
      ["Attribute", "renamed", "Supplier.supplier_tier"],
      ["Attribute", "added", "Supplier.certification"],
      ["Attribute", "removed", "Supplier.legacy"],
      ["Attribute", "changed", "Contract.status"],
    ]);
    expect(by("Supplier.supplier_tier")).toMatchObject({ was: "Supplier.tier", base: "Supplier.tier", members: [] });
    expect(by("Supplier.certification")?.members.map((m) => m.member)).toEqual(["type", "values"]);
    expect(by("Contract.status")?.members).toEqual([
      { member: "values", before: ["active", "expired"], after: ["active", "expired", "terminated"], added: ["terminated"], removed: [] },
    ]);
  });

  it("without the change sets a rename reads as a removal and an addition", () => {
    const diff = diffSchemas(base, proposed);
    expect(diff.filter((e) => e.section === "Attribute" && e.name.startsWith("Supplier.")).map((e) => `${e.change} ${e.name}`)).toEqual([
      "added Supplier.supplier_tier",
      "added Supplier.certification",
      "removed Supplier.tier",
      "removed Supplier.legacy",
    ]);
  });

  it("follows a renamed Kind's Attributes to their base names, and chains of renames", () => {
    const renames = renamesOf([
      { op: "rename_kind", kind: "Supplier", to: "Vendor" },
      { op: "rename_attribute", kind: "Vendor", attribute: "tier", to: "rank" },
      { op: "rename_attribute", kind: "Vendor", attribute: "rank", to: "level" },
    ]);
    expect(renames.kinds.get("Vendor")).toBe("Supplier");
    expect(renames.attributes.get("Supplier")?.get("level")).toBe("tier");
    const after = schema([{ ...supplier({ level: attribute("integer", { min: 1, max: 3 }), legacy: attribute("string") }), name: "Vendor" }, contract(["active", "expired"])]);
    const diff = diffSchemas(base, after, [
      { op: "rename_kind", kind: "Supplier", to: "Vendor" },
      { op: "rename_attribute", kind: "Vendor", attribute: "tier", to: "level" },
    ]);
    expect(diff.map((e) => `${e.change} ${e.name} ${e.was ?? ""}`.trim())).toEqual(["renamed Vendor Supplier", "renamed Vendor.level Supplier.tier"]);
  });

  it("compares Relations, Operations and lenses by name, and reads absent and empty alike", () => {
    const relation = { name: "supplies", from: "Supplier", to: "Contract", inverse: null, cardinality: "one_to_many" as const, description: "", required_from: false, attributes: {} };
    const lens = { name: "risk", description: "", kinds: ["Supplier"], traits: [], relations: [], depth: 1, budget_tokens: null, include_schema: null, include_recent_changes: null, include_lineage: null };
    const before = schema(base.kinds, { relations: [relation], lenses: [lens] });
    const after = schema(base.kinds, { relations: [{ ...relation, name: "provides" }], lenses: [{ ...lens, depth: 2 }] });
    const diff = diffSchemas(before, after, [{ op: "rename_relation", relation: "supplies", to: "provides" }]);
    expect(diff.map((e) => `${e.section} ${e.change} ${e.name}`)).toEqual(["Relation renamed provides", "lens changed risk"]);
    expect(memberDiffs({ aliases: [], x: null }, { aliases: undefined, x: undefined })).toEqual([]);
  });
});

describe("a schema diff against the target (three-way)", () => {
  const mine = diffSchemas(base, proposed, changes);

  it("an element the target did not touch is unchanged there", () => {
    expect(againstTarget(mine, []).get("Attribute:Supplier.certification")).toBe("unchanged");
  });

  it("the same change on both sides is no Conflict; a different one is", () => {
    const target = schema([supplier({ tier: attribute("integer", { min: 1, max: 3 }), legacy: attribute("string") }), contract(["active", "expired", "void"])]);
    const theirs = diffSchemas(base, target);
    expect(againstTarget(mine, theirs).get("Attribute:Contract.status")).toBe("conflict");
    const same = schema([supplier({ tier: attribute("integer", { min: 1, max: 3 }), legacy: attribute("string") }), contract(["active", "expired", "terminated"])]);
    expect(againstTarget(mine, diffSchemas(base, same)).get("Attribute:Contract.status")).toBe("same");
  });

  it("a rename on one side and a change of definition on the other merge apart; a removal against a change conflicts", () => {
    const target = schema([supplier({ tier: attribute("integer", { min: 1, max: 5 }), legacy: attribute("text") }), contract(["active", "expired"])]);
    const standing = againstTarget(mine, diffSchemas(base, target));
    expect(standing.get("Attribute:Supplier.supplier_tier")).toBe("apart");
    expect(standing.get("Attribute:Supplier.legacy")).toBe("conflict");
  });
});

describe("the preview's writes per element", () => {
  const preview = { writes: { counts: { "Supplier.certification": 30 }, derived: {}, sample: [], derived_sample: [] } } as unknown as SchemaChangeResult;
  const diff = diffSchemas(base, proposed, changes);

  it("reads the count of an Attribute, none for a rename, and nothing without a preview", () => {
    const certification = diff.find((e) => e.name === "Supplier.certification")!;
    const tier = diff.find((e) => e.name === "Supplier.supplier_tier")!;
    expect(writesText(certification, writesFor(certification, preview))).toBe("writes 30 values");
    expect(writesText(tier, writesFor(tier, preview))).toBe("moves its values, writes none");
    expect(writesFor(tier, null)).toBeUndefined();
  });
});

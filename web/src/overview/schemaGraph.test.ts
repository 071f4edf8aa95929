import { describe, expect, it } from "vitest";
import type { Schema } from "../api/types";
import { kindLabel, schemaElements } from "./schemaGraph";

const schema = {
  domain: "d",
  branch: "main",
  description: "",
  revision: "r",
  kinds: [
    { name: "A", description: "", key: ["k"], title: null, aliases: [], stewards: [], attributes: {}, implements: ["Located"] },
    { name: "B", description: "", key: ["k"], title: null, aliases: [], stewards: [], attributes: {}, implements: [] },
  ],
  relations: [
    { name: "a_to_b", from: "A", to: "B", inverse: null, cardinality: "many_to_one", description: "", required_from: false, attributes: {} },
    { name: "b_to_hidden", from: "B", to: "Hidden", inverse: null, cardinality: "many_to_one", description: "", required_from: false, attributes: {} },
  ],
  traits: [],
  lenses: [],
  operations: [],
  sources: [],
} satisfies Schema;

describe("schemaElements", () => {
  it("draws the Kinds with their counts and the Relations between them", () => {
    const elements = schemaElements(schema, { A: 1200 });
    expect(elements).toContainEqual({ data: { id: "kind:A", label: "A\n1,200 Records", records: 1200, traits: "Located" } });
    expect(elements).toContainEqual({ data: { id: "kind:B", label: "B", records: null, traits: "" } });
    expect(elements).toContainEqual({ data: { id: "relation:a_to_b", source: "kind:A", target: "kind:B", label: "a_to_b" } });
  });

  it("never draws a Kind the answer does not hold", () => {
    const ids = schemaElements(schema, {}).map((e) => e.data.id);
    expect(ids).not.toContain("relation:b_to_hidden");
    expect(ids.some((id) => id.includes("Hidden"))).toBe(false);
  });

  it("labels a Kind without a count by its name", () => {
    expect(kindLabel("Part", undefined)).toBe("Part");
    expect(kindLabel("Part", 0)).toBe("Part\n0 Records");
  });
});

import { describe, expect, it } from "vitest";
import { candidateId, compareLists, compareRuns, sectionRows } from "./compare";
import { contextBody, emptyConfig, labelOf, parseVector, resolveBody, searchBody } from "./config";
import type { ContextPack, LabRun, ResolveResult, SearchResults } from "./types";

function run(search: string[], pack: string[], candidates: string[] = []): LabRun {
  const resolve: ResolveResult = {
    revision: "r",
    candidates: candidates.map((attribute) => ({ target: "attribute", kind: "Part", attribute, score: 1, level: "exact", matched: attribute })),
    unmatched: [],
    skipped: [],
  };
  const results: SearchResults = {
    revision: "r", text: "q", kinds: [], count: search.length,
    results: search.map((ref, i) => ({ ref, kind: "Part", key: ref.split("/")[1]!, title: ref, score: 1 - i / 10 })),
  };
  const context: ContextPack = {
    revision: "r",
    seeds: pack.slice(0, 1).map((ref) => ({ ref, title: ref })),
    neighbors: pack.slice(1).map((ref) => ({ ref, title: ref, depth: 1 })),
    links: {},
    budget: { limit_tokens: 100, used_tokens: 90, chars_per_token: 4, sections: { seeds: 10, neighbors: 80 }, trimmed: [], omitted: {}, over_budget: false, capped: false },
  };
  return { resolve: { ok: true, value: resolve }, search: { ok: true, value: results }, context: { ok: true, value: context } };
}

describe("comparison", () => {
  it("says what one configuration finds and the others miss, with their ranks", () => {
    const section = compareLists([["a", "b", "c"], ["c", "a"], ["a"]], (x) => x);
    expect(section.lists[0]!.map((c) => [c.id, c.missedBy])).toEqual([["a", []], ["b", [1, 2]], ["c", [2]]]);
    expect(section.lists[1]!.map((c) => c.ranks)).toEqual([[2, 0, null], [0, 1, 0]]);
    expect(section.unique).toEqual([2, 1, 0]);
    expect(section.common).toEqual(["a"]);
  });

  it("leaves a configuration without an answer out instead of counting it as missing", () => {
    const section = compareLists([["a", "b"], null, ["a"]], (x) => x);
    expect(section.lists[1]).toBeNull();
    expect(section.lists[0]!.map((c) => c.missedBy)).toEqual([[], [2]]);
    expect(section.unique).toEqual([1, 0, 0]);
  });

  it("counts an item once even when a list repeats it", () => {
    const section = compareLists([["a", "a"], ["b"]], (x) => x);
    expect(section.lists[0]).toHaveLength(1);
  });

  it("compares candidates, search results and pack Records of whole runs", () => {
    const a = run(["Part/P-1", "Part/P-2"], ["Part/P-1", "Supplier/S-1"], ["price"]);
    const b = run(["Part/P-2"], ["Part/P-1"], ["price", "colour"]);
    const failed: LabRun = { ...b, search: { ok: false, problem: { status: 422, title: "lens unknown" } } };
    const comparison = compareRuns([a, b, failed]);
    expect(comparison.search.lists[0]!.find((c) => c.id === "Part/P-1")!.missedBy).toEqual([1]);
    expect(comparison.search.lists[2]).toBeNull();
    expect(comparison.pack.lists[0]!.map((c) => [c.id, c.item.section, c.missedBy])).toEqual([
      ["Part/P-1", "seed", []],
      ["Supplier/S-1", "neighbor", [1, 2]],
    ]);
    expect(comparison.candidates.unique).toEqual([0, 1, 1]);
  });

  it("identifies value candidates by their values", () => {
    const base = { target: "value" as const, kind: "Part", attribute: "colour", score: 1, level: "exact", matched: "red" };
    expect(candidateId({ ...base, values: ["red"] })).not.toBe(candidateId({ ...base, values: ["Rosso", "red"] }));
  });

  it("lines up the token sections of the packs", () => {
    const rows = sectionRows([{ sections: { lineage: 3, seeds: 10, extra: 1 } }, null, { sections: { seeds: 12, schema: 40 } }]);
    expect(rows.map((r) => r.section)).toEqual(["seeds", "schema", "lineage", "extra"]);
    expect(rows[0]!.tokens).toEqual([10, null, 12]);
  });
});

describe("request bodies", () => {
  it("send only what the configuration sets", () => {
    expect(searchBody("red seals", emptyConfig())).toEqual({ text: "red seals" });
    expect(contextBody("red seals", emptyConfig(), "dev")).toEqual({ search: "red seals", format: "json", branch: "dev" });
    expect(resolveBody("red seals", emptyConfig())).toEqual({ text: "red seals", record_misses: false });
    const config = { ...emptyConfig(), lens: "supplier_risk", traits: ["Located"], depth: 0, budgetTokens: 0, includeLineage: false, queryVector: [1, 2], limit: 5 };
    expect(contextBody("q", config)).toEqual({
      search: "q", format: "json", lens: "supplier_risk", traits: ["Located"], depth: 0, budget_tokens: 0, include_lineage: false,
    });
    expect(searchBody("q", config)).toEqual({ text: "q", lens: "supplier_risk", traits: ["Located"], limit: 5, query_vector: [1, 2] });
  });

  it("parse a query vector and label configurations", () => {
    expect(parseVector("0.1, 0.2 3")).toEqual([0.1, 0.2, 3]);
    expect(parseVector("  ")).toBeNull();
    expect(parseVector("1, two")).toContain('"two" is not a number');
    expect(labelOf(emptyConfig(), 1)).toBe("B");
    expect(labelOf(emptyConfig("wide"), 1)).toBe("wide");
  });
});

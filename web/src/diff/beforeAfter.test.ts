import { describe, expect, it } from "vitest";
import type { DiffResult } from "../api/types";
import { beforeAfterRows, historyRows, recordDiffs, rowChange } from "./beforeAfter";

describe("before/after rows", () => {
  it("names how each value changed", () => {
    expect(rowChange({ a: "1" }, { a: "2" }, "a")).toBe("changed");
    expect(rowChange({}, { a: "2" }, "a")).toBe("added");
    expect(rowChange({ a: "1" }, { a: null }, "a")).toBe("removed");
    expect(rowChange({ a: [1] }, { a: [1] }, "a")).toBe("unchanged");
  });

  it("follows the Attributes the change names, else every Attribute either side holds", () => {
    expect(beforeAfterRows(["risk_score"], { risk_score: "72" }, { risk_score: "90", city: "Poznan" })).toEqual([
      { attribute: "risk_score", before: "72", after: "90", change: "changed" },
    ]);
    expect(beforeAfterRows([], undefined, { b: "2", a: "1" }).map((r) => [r.attribute, r.change])).toEqual([
      ["a", "added"],
      ["b", "added"],
    ]);
  });

  it("reads a creation (no values before) and a deletion (none after)", () => {
    expect(beforeAfterRows(["a"], null, { a: "1" })).toEqual([{ attribute: "a", before: null, after: "1", change: "added" }]);
    expect(beforeAfterRows(["a"], { a: "1" }, null)).toEqual([{ attribute: "a", before: "1", after: null, change: "removed" }]);
  });

  it("reads a history entry with values", () => {
    const rows = historyRows({
      revision: "r",
      at: "t",
      author: "u",
      message: "m",
      origin: { type: "operation", ref: "inv" },
      provenance: {},
      change: "modified",
      attributes: ["risk_score"],
      before: { risk_score: "72" },
      after: { risk_score: "90", city: "Poznan" },
    });
    expect(rows).toEqual([{ attribute: "risk_score", before: "72", after: "90", change: "changed" }]);
  });
});

describe("recordDiffs", () => {
  it("lists a diff Record by Record with the kind and key split out", () => {
    const diff: DiffResult = {
      domain: "supply",
      branch: "work",
      from: "a",
      to: "b",
      revision: "b",
      records: {
        added: [{ ref: "Part/P-2", values: { part_number: "P-2" } }],
        removed: [{ ref: "Part/P-1", values: { part_number: "P-1" } }],
        changed: [{ ref: "Supplier/S-1", attributes: ["tier"], before: { tier: "1" }, after: { tier: "2" } }],
      },
      links: { added: [], removed: [], changed: [] },
    };
    const records = recordDiffs(diff);
    expect(records.map((r) => [r.ref, r.change])).toEqual([
      ["Part/P-1", "removed"],
      ["Part/P-2", "added"],
      ["Supplier/S-1", "changed"],
    ]);
    expect(records[0]).toMatchObject({ kind: "Part", key: "P-1" });
    expect(records[0]?.rows).toEqual([{ attribute: "part_number", before: "P-1", after: null, change: "removed" }]);
    expect(records[2]?.rows).toEqual([{ attribute: "tier", before: "1", after: "2", change: "changed" }]);
  });
});

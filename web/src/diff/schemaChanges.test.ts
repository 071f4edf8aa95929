import { describe, expect, it } from "vitest";
import { ApiProblem } from "../api/problem";
import type { SchemaChangeResult } from "../api/types";
import { verdict, type TargetView } from "./schemaChanges";

const problem = (status: number) => new ApiProblem({ type: "about:blank", title: "t", status, detail: "d", code: status === 403 ? "forbidden" : "validation-failed" });

const target = (more: Partial<TargetView> = {}): TargetView => ({
  branch: "main",
  standing: new Map([["Attribute:Supplier.certification", "unchanged"]]),
  alreadyThere: false,
  fastForward: true,
  preview: { violation_count: 0 } as SchemaChangeResult,
  previewError: null,
  ...more,
});

describe("whether a schema change merges cleanly into the target", () => {
  it("says nothing against a fast-forward without Conflicts or violations", () => {
    expect(verdict(target())).toEqual([]);
  });

  it("names the Conflicts, the violations, and a target that moved since the base", () => {
    const reasons = verdict(
      target({
        standing: new Map([
          ["Attribute:Contract.status", "conflict"],
          ["Kind:Part", "apart"],
        ]),
        fastForward: false,
        preview: { violation_count: 3 } as SchemaChangeResult,
      }),
    );
    expect(reasons).toHaveLength(3);
    expect(reasons[0]).toContain("main changed Contract.status differently since the base");
    expect(reasons[1]).toContain("3 Records or Links on main would violate");
    expect(reasons[2]).toContain("three-way");
  });

  it("a change set that does not apply to the target is a reason; a preview the reader may not run is not", () => {
    expect(verdict(target({ preview: null, previewError: problem(422) }))).toEqual(["The change sets do not apply to main as it is now."]);
    expect(verdict(target({ preview: null, previewError: problem(403) }))).toEqual([]);
  });
});

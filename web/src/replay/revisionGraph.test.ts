import { describe, expect, it } from "vitest";
import { revisionOverlay, type Neighborhood } from "./revisionGraph";
import { buildTimeline } from "./timeline";
import type { Session } from "./types";

const step = (touched: string[], links: Array<[string, string, string]>) => ({
  kind: "step",
  touched,
  touched_links: links.map(([relation, from, to]) => ({ relation, from, to })),
});

const session = {
  session: "s",
  entries: [
    step(["Supplier/S-1", "Part/P-1"], [["supplies", "Supplier/S-1", "Part/P-1"]]),
    step(["Supplier/S-1", "Part/P-2"], [["supplies", "Supplier/S-1", "Part/P-2"]]),
  ],
} as unknown as Session;

const answer = (links: Array<[string, string, string]>, capped = false): Neighborhood => ({
  domain: "supply",
  branch: "main",
  revision: "r2",
  capped,
  records: [],
  links: links.map(([relation, from, to]) => ({ relation, from, to, revision: "r" })),
});

describe("the graph as of a step's Revision", () => {
  const timeline = buildTimeline(session);

  it("leaves out a Link drawn earlier that is not there at this Revision", () => {
    const overlay = revisionOverlay(timeline, 1, ["Supplier/S-1", "Part/P-2"], answer([["supplies", "Supplier/S-1", "Part/P-2"]]));
    expect(overlay.missingEdges).toEqual([0]); // S-1 supplies P-1 is gone at r2
    expect(overlay.extraNodes).toEqual([]);
    expect(overlay.revision).toBe("r2");
  });

  it("adds the Links and Records around the step's Records the session never touched", () => {
    const overlay = revisionOverlay(
      timeline,
      1,
      ["Supplier/S-1"],
      answer([
        ["supplies", "Supplier/S-1", "Part/P-1"],
        ["supplies", "Supplier/S-1", "Part/P-2"],
        ["supplies", "Supplier/S-1", "Part/P-9"],
        ["party", "Contract/C-1", "Supplier/S-1"],
      ]),
    );
    expect(overlay.missingEdges).toEqual([]);
    expect(overlay.extraNodes.map((n) => n.ref)).toEqual(["Part/P-9", "Contract/C-1"]);
    expect(overlay.extraNodes.every((n) => n.anchor === timeline.nodeIndex.get("Supplier/S-1"))).toBe(true);
    expect(overlay.extraEdges).toEqual([[0, -1], [-2, 0]]);
  });

  it("does not call anything missing when the walk was capped, and counts what is past its own cap", () => {
    const overlay = revisionOverlay(
      timeline,
      1,
      ["Supplier/S-1"],
      answer([["supplies", "Supplier/S-1", "Part/P-8"], ["supplies", "Supplier/S-1", "Part/P-9"]], true),
      1,
    );
    expect(overlay.missingEdges).toEqual([]);
    expect(overlay.extraNodes).toHaveLength(1);
    expect(overlay.more).toBe(1);
    expect(overlay.extraEdges).toHaveLength(1);
  });

  it("does not draw Records touched only at later steps", () => {
    const overlay = revisionOverlay(timeline, 0, ["Supplier/S-1"], answer([["supplies", "Supplier/S-1", "Part/P-1"], ["supplies", "Supplier/S-1", "Part/P-2"]]));
    expect(overlay.extraNodes.map((n) => n.ref)).toEqual(["Part/P-2"]); // not drawn yet at step 1: hollow
  });
});

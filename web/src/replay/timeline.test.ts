import { describe, expect, it } from "vitest";
import { buildTimeline, clampStep, kindOf, notesAround, splitRef } from "./timeline";
import { syntheticSession } from "./synthetic";
import type { Session } from "./types";

const session: Session = {
  session: "s1",
  steps: 3,
  entries: [
    { kind: "note", id: 1, at: "2026-10-01T08:00:00Z", principal: "agt", text: "starting" },
    {
      kind: "step", id: 2, at: "2026-10-01T08:00:01Z", principal: "agt", domain: "supply", call: "GetRecord",
      status: 200, latency_ms: 3, counts: {}, request: {}, touched: ["Supplier/S-1"], revision: "a".repeat(64),
    },
    {
      kind: "step", id: 3, at: "2026-10-01T08:00:02Z", principal: "agt", domain: "supply", call: "Context",
      status: 200, latency_ms: 9, counts: {}, request: {}, touched: ["Supplier/S-1", "Part/P-1"],
      touched_links: [{ relation: "supplied_by", from: "Part/P-1", to: "Supplier/S-1" }],
    },
    { kind: "note", id: 4, at: "2026-10-01T08:00:03Z", principal: "agt", text: "found the part" },
    {
      kind: "step", id: 5, at: "2026-10-01T08:00:04Z", principal: "agt", domain: "supply", call: "GetLinks",
      status: 404, latency_ms: 1, counts: {}, request: {}, touched: [],
      touched_links: [
        { relation: "supplied_by", from: "Part/P-1", to: "Supplier/S-1" },
        { relation: "located_in", from: "Supplier/S-1", to: "Plant/PL-1/a" },
      ],
    },
  ],
};

describe("buildTimeline", () => {
  const timeline = buildTimeline(session);

  it("keeps the steps in order and attaches each note to the step it follows", () => {
    expect(timeline.steps.map((s) => s.id)).toEqual([2, 3, 5]);
    expect(timeline.leadingNotes.map((n) => n.text)).toEqual(["starting"]);
    expect(timeline.notesAfter.map((notes) => notes.map((n) => n.text))).toEqual([[], ["found the part"], []]);
    expect(notesAround(timeline, 0).before.map((n) => n.text)).toEqual(["starting"]);
    expect(notesAround(timeline, 2).before.map((n) => n.text)).toEqual(["found the part"]);
    expect(notesAround(timeline, 9)).toEqual({ before: [], after: [] });
  });

  it("makes one node per Record and one edge per Link, remembering the first step of each", () => {
    expect(timeline.nodes).toEqual(["Supplier/S-1", "Part/P-1", "Plant/PL-1/a"]);
    expect(timeline.nodeKinds).toEqual(["Supplier", "Part", "Plant"]);
    expect([...timeline.nodeFirstStep]).toEqual([0, 1, 2]);
    expect(timeline.edgeRelations).toEqual(["supplied_by", "located_in"]);
    expect([...timeline.edgeEnds]).toEqual([1, 0, 0, 2]);
    expect([...timeline.edgeFirstStep]).toEqual([1, 2]);
  });

  it("lists what each step touched, Link ends included", () => {
    expect(timeline.stepNodes.map((ids) => [...ids].sort())).toEqual([[0], [0, 1], [0, 1, 2]]);
    expect(timeline.stepEdges.map((ids) => [...ids])).toEqual([[], [0], [0, 1]]);
  });

  it("clamps steps and splits references whose key holds a slash", () => {
    expect(clampStep(timeline, -4)).toBe(0);
    expect(clampStep(timeline, 99)).toBe(2);
    expect(clampStep(timeline, Number.NaN)).toBe(0);
    expect(splitRef("Plant/PL-1/a")).toEqual({ kind: "Plant", key: "PL-1/a" });
    expect(kindOf("Plant/PL-1/a")).toBe("Plant");
  });

  it("ignores touched entries that are not references", () => {
    const odd = buildTimeline({
      session: "x",
      steps: 1,
      entries: [{ ...(session.entries[1] as object), touched: ["nokey", "", "/x"] } as Session["entries"][number]],
    });
    expect(odd.nodes).toEqual([]);
  });

  it("indexes a 2,000-step, 5,000-Record session", () => {
    const big = buildTimeline(syntheticSession(2000, 5000));
    expect(big.steps).toHaveLength(2000);
    expect(big.nodes).toHaveLength(5000);
    expect(big.stepNodes.every((ids) => ids.length > 0)).toBe(true);
  });
});

import { describe, expect, it } from "vitest";
import { addNeighborhood, emptyGraph, timelineOf, viewOf, type Neighborhood } from "./graph";

const answer = (records: Array<[string, number]>, links: Array<[string, string, string]>, capped = false): Neighborhood => ({
  domain: "supply",
  branch: "main",
  revision: "r",
  capped,
  records: records.map(([ref, depth]) => {
    const [kind, key] = ref.split("/") as [string, string];
    return { ref, kind, key, title: key, depth };
  }),
  links: links.map(([relation, from, to]) => ({ relation, from, to, revision: "r" })),
});

const none = { hiddenKinds: new Set<string>(), hiddenRelations: new Set<string>() };

describe("the neighbourhood graph", () => {
  const first = addNeighborhood(
    emptyGraph("Supplier/S-1"),
    "Supplier/S-1",
    answer(
      [["Supplier/S-1", 0], ["Part/P-1", 1], ["Part/P-2", 1], ["Contract/C-1", 1]],
      [["supplies", "Supplier/S-1", "Part/P-1"], ["supplies", "Supplier/S-1", "Part/P-2"], ["party", "Contract/C-1", "Supplier/S-1"]],
    ),
  );

  it("expands a node: its neighbours are one Link further from the seed", () => {
    const grown = addNeighborhood(first, "Part/P-1", answer([["Part/P-1", 0], ["Plant/L-1", 1], ["Supplier/S-1", 1]], [["made_at", "Part/P-1", "Plant/L-1"], ["supplies", "Supplier/S-1", "Part/P-1"]]));
    expect(grown.records.get("Plant/L-1")?.depth).toBe(2);
    expect(grown.records.get("Supplier/S-1")?.depth).toBe(0); // the smallest distance stays
    expect(grown.expanded).toEqual(["Supplier/S-1", "Part/P-1"]);
    expect(grown.links.size).toBe(4);
    expect(viewOf(grown, none, 100).records.map((r) => r.ref)).toEqual([
      "Supplier/S-1", "Contract/C-1", "Part/P-1", "Part/P-2", "Plant/L-1",
    ]);
  });

  it("leaves out a Kind, and what is reachable only through it", () => {
    const grown = addNeighborhood(first, "Part/P-1", answer([["Part/P-1", 0], ["Plant/L-1", 1]], [["made_at", "Part/P-1", "Plant/L-1"]]));
    const view = viewOf(grown, { ...none, hiddenKinds: new Set(["Part"]) }, 100);
    expect(view.records.map((r) => r.ref)).toEqual(["Supplier/S-1", "Contract/C-1"]);
    expect(view.links).toHaveLength(1);
    expect(view.kinds).toEqual(["Contract", "Part", "Plant", "Supplier"]); // the pickers still offer it
  });

  it("follows only the Relations shown", () => {
    const view = viewOf(first, { ...none, hiddenRelations: new Set(["supplies"]) }, 100);
    expect(view.records.map((r) => r.ref)).toEqual(["Supplier/S-1", "Contract/C-1"]);
  });

  it("draws at most the cap and counts the rest", () => {
    const view = viewOf(first, none, 2);
    expect(view.records).toHaveLength(2);
    expect(view.more).toBe(2);
    expect(view.links.every((l) => view.records.some((r) => r.ref === l.from) && view.records.some((r) => r.ref === l.to))).toBe(true);
  });

  it("never draws a Link whose end was not read (a hidden Kind is not in the answer)", () => {
    const graph = addNeighborhood(emptyGraph("Supplier/S-1"), "Supplier/S-1", answer([["Supplier/S-1", 0]], [["secret", "Supplier/S-1", "Hidden/H-1"]], true));
    const view = viewOf(graph, none, 100);
    expect(view.records.map((r) => r.ref)).toEqual(["Supplier/S-1"]);
    expect(view.links).toEqual([]);
    expect(graph.capped).toBe(true);
  });

  it("becomes a one-step timeline with the expanded Records current", () => {
    const view = viewOf(first, none, 100);
    const timeline = timelineOf(view, ["Supplier/S-1"], "x");
    expect(timeline.nodes).toHaveLength(4);
    expect(timeline.edgeEnds).toHaveLength(6);
    expect([...timeline.stepNodes[0]!]).toEqual([timeline.nodeIndex.get("Supplier/S-1")]);
  });
});

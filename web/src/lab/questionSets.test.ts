import { describe, expect, it } from "vitest";
import { deleteSet, formatQuestions, hitAtK, hitRank, loadSets, parseQuestions, saveSet, type SetStore } from "./questionSets";

function memory(): SetStore {
  const items = new Map<string, string>();
  return { getItem: (key) => items.get(key) ?? null, setItem: (key, value) => void items.set(key, value) };
}

describe("question sets", () => {
  it("reads one question a line with its expected Records, and says what is wrong", () => {
    const { questions, errors } = parseQuestions("kavsen alloys | Supplier/S-1001\n\nseals|Part/P-1, Part/P-2\nno records |\nbad | S-1");
    expect(questions).toEqual([
      { text: "kavsen alloys", expected: ["Supplier/S-1001"] },
      { text: "seals", expected: ["Part/P-1", "Part/P-2"] },
    ]);
    expect(errors).toEqual([
      'line 4: name the expected Records after "|", like Supplier/S-1001',
      "line 5: an expected Record is Kind/key",
    ]);
    expect(parseQuestions(formatQuestions(questions)).questions).toEqual(questions);
  });

  it("scores hit@k: the first expected Record within the first k results", () => {
    expect(hitRank(["A/1", "B/2", "C/3"], ["C/3", "B/2"], 3)).toBe(2);
    expect(hitRank(["A/1", "B/2", "C/3"], ["C/3"], 2)).toBeNull();
    expect(hitAtK([1, null, 3, undefined])).toEqual({ hits: 2, scored: 3, rate: 2 / 3 });
    expect(hitAtK([]).rate).toBeNull();
  });

  it("keeps sets per Domain, one per name", () => {
    const store = memory();
    saveSet("supply", store, { name: "b", k: 5, questions: [] });
    saveSet("supply", store, { name: "a", k: 3, questions: [{ text: "q", expected: ["A/1"] }] });
    saveSet("supply", store, { name: "b", k: 10, questions: [] });
    expect(loadSets("supply", store).map((s) => [s.name, s.k])).toEqual([["a", 3], ["b", 10]]);
    expect(loadSets("other", store)).toEqual([]);
    expect(deleteSet("supply", store, "a").map((s) => s.name)).toEqual(["b"]);
    store.setItem("lorebase.lab.sets.broken", "{not json");
    expect(loadSets("broken", store)).toEqual([]);
  });
});

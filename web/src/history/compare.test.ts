import { describe, expect, it } from "vitest";
import type { RevisionEvent } from "../api/types";
import { compareHistories } from "./compare";

function event(revision: string, branch: string, generation: number, parent = ""): RevisionEvent {
  return {
    sequence: generation,
    type: "revision.committed",
    domain: "supply",
    branch,
    revision,
    parents: parent ? [parent] : [],
    generation,
    author: "a",
    message: "",
    origin: { type: "api", ref: "" },
    created_at: "",
    kinds: {},
    relations: {},
    stats: { partitions_changed: 0, changes: 0 },
    schema_changed: false,
    keys: {},
    keys_truncated: false,
  };
}

describe("compareHistories", () => {
  it("counts ahead and behind and finds where the branches last met", () => {
    const shared = [event("r1", "main", 1), event("r2", "main", 2, "r1")];
    const base = [...shared, event("r3", "main", 5, "r2")];
    const head = [...shared, event("w1", "work", 3, "r2"), event("w2", "work", 4, "w1")];
    const result = compareHistories(base, head);
    expect(result.ahead.map((e) => e.revision)).toEqual(["w1", "w2"]);
    expect(result.behind.map((e) => e.revision)).toEqual(["r3"]);
    expect(result.mergeBase).toBe("r2");
    expect(result.head).toBe("w2");
  });

  it("says nothing is ahead of an identical branch", () => {
    const same = [event("r1", "main", 1)];
    expect(compareHistories(same, same)).toEqual({ ahead: [], behind: [], mergeBase: "r1", head: "r1" });
  });
});

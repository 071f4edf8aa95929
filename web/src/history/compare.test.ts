import { describe, expect, it } from "vitest";
import type { RevisionDoc } from "../api/types";
import { compareBranches } from "./compare";

function doc(id: string, generation: number, parent = ""): RevisionDoc {
  return {
    id,
    branch: "x",
    generation,
    parents: parent ? [parent] : [],
    author: "a",
    message: id,
    origin: {},
    stats: {},
    created_at: "",
    schema_version: "",
    schema_changed: false,
  };
}

// main: r1 <- r2 <- r3 <- m4 ; branch: r2 <- b3 <- b4 <- b5
const revisions = new Map(
  [doc("r1", 1), doc("r2", 2, "r1"), doc("r3", 3, "r2"), doc("m4", 4, "r3"), doc("b3", 3, "r2"), doc("b4", 4, "b3"), doc("b5", 5, "b4")].map(
    (d) => [d.id, d],
  ),
);

describe("compareBranches", () => {
  it("walks back from both heads to where they met", async () => {
    const asked: string[] = [];
    const result = await compareBranches("m4", "b5", async (_side, id) => {
      asked.push(id);
      return revisions.get(id)!;
    });
    expect(result.ahead.map((d) => d.id)).toEqual(["b5", "b4", "b3"]);
    expect(result.behind.map((d) => d.id)).toEqual(["m4", "r3"]);
    expect(result.mergeBase).toBe("r2");
    expect(result.head).toBe("b5");
    expect(asked).not.toContain("r1"); // nothing older than the fork is read
  });

  it("a branch with nothing of its own is neither ahead nor behind", async () => {
    const result = await compareBranches("r2", "r2", async (_side, id) => revisions.get(id)!);
    expect(result).toMatchObject({ ahead: [], behind: [], mergeBase: "r2" });
  });

  it("stops at the limit and says so", async () => {
    const result = await compareBranches("m4", "b5", async (_side, id) => revisions.get(id)!, 1);
    expect(result.truncated).toBe(true);
    expect(result.mergeBase).toBeNull();
  });
});

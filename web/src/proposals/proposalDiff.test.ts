import { describe, expect, it } from "vitest";
import type { RevisionDoc } from "../api/types";
import { mergeRange, ownRange } from "./proposalDiff";

const doc = (id: string, branch: string, parent: string | null): RevisionDoc => ({
  id,
  branch,
  generation: 0,
  parents: parent ? [parent] : [],
  author: "u",
  message: "",
  origin: {},
  stats: {},
  created_at: "",
  schema_version: "",
  schema_changed: false,
});

describe("Proposal diff ranges", () => {
  // main: a <- b ; work: b <- c <- d ; main merged: b <- m
  const docs = new Map([doc("a", "main", null), doc("b", "main", "a"), doc("c", "work", "b"), doc("d", "work", "c"), doc("m", "main", "b")].map((d) => [d.id, d]));
  const asked: string[] = [];
  const read = async (id: string) => {
    asked.push(id);
    return docs.get(id)!;
  };

  it("runs over the source branch's own Revisions, read back from its head", async () => {
    asked.length = 0;
    expect(await ownRange(read, "d", "work")).toEqual({ branch: "work", from: "b", to: "d" });
    expect(asked).toEqual(["d", "c", "b"]); // nothing older than the fork
  });

  it("has nothing to show for a branch without its own Revisions", async () => {
    expect(await ownRange(read, "b", "other")).toBeNull();
    expect(await ownRange(read, null, "work")).toBeNull();
  });

  it("reads a merge from its first parent", async () => {
    expect(await mergeRange(read, "main", "m")).toEqual({ branch: "main", from: "b", to: "m" });
    expect(await mergeRange(read, "main", "a")).toBeNull();
  });
});

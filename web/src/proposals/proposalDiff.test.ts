import { describe, expect, it } from "vitest";
import type { RevisionEvent } from "../api/types";
import { mergeRange, ownRange } from "./proposalDiff";

const event = (sequence: number, branch: string, revision: string, parent: string | null): RevisionEvent => ({
  sequence,
  type: "revision.committed",
  domain: "d",
  branch,
  revision,
  parents: parent ? [parent] : [],
  generation: sequence,
  author: "u",
  message: "",
  origin: { type: "operation", ref: "" },
  created_at: "",
  kinds: {},
  relations: {},
  stats: { partitions_changed: 0, changes: 0 },
  schema_changed: false,
  keys: {},
  keys_truncated: false,
});

describe("Proposal diff ranges", () => {
  const events = [event(1, "main", "a", null), event(2, "main", "b", "a"), event(3, "work", "c", "b"), event(4, "work", "d", "c")];

  it("runs over the source branch's own Revisions", () => {
    expect(ownRange(events, "work")).toEqual({ branch: "work", from: "b", to: "d" });
  });

  it("has nothing to show for a branch without its own Revisions", () => {
    expect(ownRange(events, "other")).toBeNull();
  });

  it("reads a merge from its first parent", () => {
    const merged = [...events, event(5, "main", "m", "b")];
    expect(mergeRange(merged, "main", "m")).toEqual({ branch: "main", from: "b", to: "m" });
    expect(mergeRange(merged, "main", "zzz")).toBeNull();
  });
});

import { describe, expect, it } from "vitest";
import type { RevisionEvent } from "../api/types";
import { asRevisionEvent, newestFirst, withEvent } from "./latestRevisions";

const event = (sequence: number): RevisionEvent => ({
  sequence,
  type: "revision.committed",
  domain: "d",
  branch: "main",
  revision: `r${sequence}`,
  parents: [],
  generation: sequence,
  author: "usr",
  message: `m${sequence}`,
  origin: { type: "operation", ref: "inv" },
  created_at: "2026-01-01T00:00:00Z",
  kinds: {},
  relations: {},
  stats: { partitions_changed: 0, changes: 0 },
  schema_changed: false,
  keys: {},
  keys_truncated: false,
});

describe("latest Revisions", () => {
  it("keeps the newest first", () => {
    expect(newestFirst([event(1), event(3), event(2)], 2).map((e) => e.sequence)).toEqual([3, 2]);
  });

  it("adds a streamed event once", () => {
    const list = [event(2), event(1)];
    const added = withEvent(list, event(3));
    expect(added.map((e) => e.sequence)).toEqual([3, 2, 1]);
    expect(withEvent(added, event(3))).toBe(added);
  });

  it("reads only revision events from the stream", () => {
    expect(asRevisionEvent({ sequence: 4, revision: "abc" })).toMatchObject({ sequence: 4, revision: "abc", kinds: {} });
    expect(asRevisionEvent("keep-alive")).toBeNull();
    expect(asRevisionEvent({ revision: 3 })).toBeNull();
  });
});

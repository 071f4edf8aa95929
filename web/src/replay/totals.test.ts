import { describe, expect, it } from "vitest";
import { buildTimeline } from "./timeline";
import { failedSteps, formatBytes, formatDuration, markPositions, sessionTotals } from "./totals";
import type { Session, SessionStep } from "./types";

function step(id: number, extra: Partial<SessionStep> = {}): SessionStep {
  return {
    kind: "step",
    id,
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, id)).toISOString(),
    principal: "svc",
    domain: "supply",
    call: "GetRecord",
    status: 200,
    latency_ms: 10,
    counts: {},
    request: {},
    touched: [],
    ...extra,
  };
}

describe("sessionTotals", () => {
  it("adds up errors, latency, writes, Revisions, changed Records, bytes and Proposals", () => {
    const session: Session = {
      session: "s",
      steps: 4,
      entries: [
        step(1, { touched: ["Supplier/S-1"], bytes: 500 }),
        step(2, {
          call: "ExecuteOperation",
          status: 202,
          revisions: ["r1"],
          changed: [{ ref: "Supplier/S-1", change: "modified" }],
          proposal: "prp_1",
          touched: ["Supplier/S-1"],
          bytes: 1500,
        }),
        step(3, { status: 404, latency_ms: 5 }),
        { kind: "note", id: 9, at: "", principal: "svc", text: "hm" },
        step(5, { call: "ExecuteOperation", revisions: ["r2"], proposal: "prp_1", changed: [{ ref: "Part/P-1", change: "created" }] }),
      ],
    };
    const totals = sessionTotals(buildTimeline(session));
    expect(totals).toMatchObject({
      steps: 4,
      errors: 1,
      latencyMs: 35,
      spanMs: 4000,
      records: 1,
      writes: 2,
      revisions: 2,
      changed: 2,
      bytes: 2000,
    });
    expect(totals.proposals).toEqual([{ id: "prp_1", domain: "supply", step: 1 }]);
    expect(failedSteps(buildTimeline(session))).toEqual([2]);
  });
});

describe("markPositions", () => {
  it("places steps along the scrubber from 0 to 1", () => {
    expect(markPositions(5, [0, 2, 4])).toEqual([0, 0.5, 1]);
    expect(markPositions(1, [0])).toEqual([0]);
  });
});

describe("formats", () => {
  it("says sizes and durations briefly", () => {
    expect(formatBytes(999)).toBe("999 B");
    expect(formatBytes(1500)).toBe("1.5 kB");
    expect(formatDuration(830)).toBe("830 ms");
    expect(formatDuration(4200)).toBe("4.2 s");
    expect(formatDuration(185_000)).toBe("3 min 5 s");
  });
});

import { describe, expect, it } from "vitest";
import { kindAnchors, LayoutCache, layoutKey, runLayout } from "./layout";
import { buildTimeline } from "./timeline";
import { syntheticSession } from "./synthetic";

const sync = (run: () => void) => run();

describe("layout", () => {
  const timeline = buildTimeline(syntheticSession(50, 120));
  const input = {
    key: layoutKey(timeline.session, timeline.nodes.length, timeline.edgeRelations.length),
    kinds: timeline.nodeKinds,
    edgeEnds: timeline.edgeEnds,
  };

  it("lays out in slices, reporting progress, and caches the finished positions", async () => {
    const cache = new LayoutCache();
    let slices = 0;
    const run = runLayout(input, { cache, schedule: sync, sliceMs: 1, maxTicks: 60, onProgress: () => (slices += 1) });
    const layout = await run.done;
    expect(layout.done).toBe(true);
    expect(layout.ticks).toBeLessThanOrEqual(60);
    expect(slices).toBeGreaterThanOrEqual(1);
    expect(layout.x).toHaveLength(120);
    expect([...layout.x, ...layout.y].every(Number.isFinite)).toBe(true);
    expect(cache.get(input.key)).toBe(layout);

    let scheduled = 0;
    const again = await runLayout(input, { cache, schedule: (f) => ((scheduled += 1), f()) }).done;
    expect(again).toBe(layout);
    expect(scheduled).toBe(0);
  });

  it("yields between slices instead of running to the end at once", () => {
    const queue: (() => void)[] = [];
    let clock = 0;
    runLayout(input, {
      cache: new LayoutCache(),
      schedule: (f) => queue.push(f),
      now: () => (clock += 5),
      sliceMs: 4,
      maxTicks: 100,
    });
    expect(queue).toHaveLength(1);
    queue.shift()!();
    expect(queue).toHaveLength(1); // one tick ran, then it yielded
  });

  it("can be cancelled", async () => {
    const queue: (() => void)[] = [];
    const cache = new LayoutCache();
    const run = runLayout(input, { cache, schedule: (f) => queue.push(f) });
    run.cancel();
    queue.shift()!();
    expect(queue).toHaveLength(0);
    expect(cache.size).toBe(0);
  });

  it("evicts the least recently used layout", () => {
    const cache = new LayoutCache(2);
    const make = (key: string) => ({ key, x: new Float32Array(0), y: new Float32Array(0), ticks: 0, done: true });
    cache.set(make("a"));
    cache.set(make("b"));
    cache.get("a");
    cache.set(make("c"));
    expect(cache.get("b")).toBeUndefined();
    expect(cache.get("a")?.key).toBe("a");
  });

  it("puts one anchor per Kind", () => {
    const anchors = kindAnchors(["A", "B", "A", "C"]);
    expect([...anchors.keys()]).toEqual(["A", "B", "C"]);
    expect(kindAnchors(["A"]).get("A")).toEqual({ x: 0, y: 0 });
  });
});

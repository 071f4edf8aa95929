import { describe, expect, it } from "vitest";
import { ReplayRenderer, type Ctx2D } from "./renderer";
import { buildTimeline } from "./timeline";
import { syntheticSession } from "./synthetic";

/** A 2D context that counts what is drawn. */
function fakeContext() {
  const calls = { fill: 0, stroke: 0, beginPath: 0, rect: 0, arc: 0, lineTo: 0, fillText: 0, fillStyles: [] as string[] };
  const ctx: Ctx2D = {
    fillStyle: "",
    strokeStyle: "",
    lineWidth: 1,
    globalAlpha: 1,
    font: "",
    setTransform: () => undefined,
    clearRect: () => undefined,
    fillRect: () => undefined,
    beginPath: () => void (calls.beginPath += 1),
    moveTo: () => undefined,
    lineTo: () => void (calls.lineTo += 1),
    rect: () => void (calls.rect += 1),
    arc: () => void (calls.arc += 1),
    fill: () => {
      calls.fill += 1;
      calls.fillStyles.push(String(ctx.fillStyle));
    },
    stroke: () => void (calls.stroke += 1),
    fillText: () => void (calls.fillText += 1),
  };
  return { ctx, calls };
}

function scene(steps: number, records: number) {
  const timeline = buildTimeline(syntheticSession(steps, records));
  const n = timeline.nodes.length;
  const x = Float32Array.from({ length: n }, (_, i) => (i % 100) * 10);
  const y = Float32Array.from({ length: n }, (_, i) => Math.floor(i / 100) * 10);
  return { timeline, x, y };
}

describe("ReplayRenderer", () => {
  it("draws one path per style, whatever the number of nodes", () => {
    const { timeline, x, y } = scene(2000, 5000);
    const { ctx, calls } = fakeContext();
    const renderer = new ReplayRenderer(ctx);
    renderer.resize(800, 600, 1);
    renderer.setScene(timeline, x, y);
    renderer.setStep(1999);
    expect(renderer.render()).toBe(true);
    // Every Record is on the graph at the last step: all but the current ones as dimmed squares.
    const current = timeline.stepNodes[1999]!.length;
    expect(calls.rect).toBe(5000 - current);
    expect(calls.arc).toBe(2 * current); // filled, then ringed
    expect(calls.lineTo).toBe(timeline.edgeRelations.length + timeline.stepEdges[1999]!.length);
    // Paths: 2 for edges, at most one per Kind colour for dimmed and for current nodes, 1 ring.
    expect(calls.beginPath).toBeLessThanOrEqual(2 + 6 + 6 + 1);
    expect(calls.fill + calls.stroke).toBeLessThanOrEqual(2 + 6 + 6 + 1);
  });

  it("draws only what the steps up to the current one touched", () => {
    const { timeline, x, y } = scene(100, 300);
    const { ctx, calls } = fakeContext();
    const renderer = new ReplayRenderer(ctx);
    renderer.setScene(timeline, x, y);
    renderer.setStep(0);
    renderer.render();
    const visible = [...timeline.nodeFirstStep].filter((s) => s <= 0).length;
    expect(calls.rect + calls.arc / 2).toBe(visible);
    expect(calls.fillText).toBe(timeline.stepNodes[0]!.length);
  });

  it("redraws only when something changed", () => {
    const { timeline, x, y } = scene(10, 30);
    const { ctx } = fakeContext();
    const renderer = new ReplayRenderer(ctx);
    renderer.setScene(timeline, x, y);
    expect(renderer.render()).toBe(true);
    expect(renderer.render()).toBe(false);
    renderer.setHover(-1);
    expect(renderer.render()).toBe(false);
    renderer.setStep(3);
    expect(renderer.render()).toBe(true);
    renderer.resize(300, 150, 1);
    expect(renderer.render()).toBe(false); // the same size
    renderer.panBy(5, 0);
    expect(renderer.render()).toBe(true);
    renderer.setAbsent([1]);
    expect(renderer.render()).toBe(true);
    expect(renderer.draws).toBe(4);
  });

  it("rings absent nodes and finds the node under the pointer", () => {
    const { timeline, x, y } = scene(10, 30);
    const { ctx, calls } = fakeContext();
    const renderer = new ReplayRenderer(ctx);
    renderer.resize(400, 300, 1);
    renderer.setScene(timeline, x, y);
    renderer.setStep(9);
    renderer.render();
    const before = calls.arc;
    renderer.setAbsent([0, 1]);
    renderer.render();
    expect(calls.arc - before).toBe(2 * timeline.stepNodes[9]!.length + 2);
    const at = renderer.screenOf(7);
    expect(renderer.nodeAt(at.x, at.y)).toBe(7);
    expect(renderer.nodeAt(-1000, -1000)).toBe(-1);
  });

  it("zooms around the pointer", () => {
    const { timeline, x, y } = scene(10, 30);
    const renderer = new ReplayRenderer(fakeContext().ctx);
    renderer.resize(400, 300, 1);
    renderer.setScene(timeline, x, y);
    const before = renderer.screenOf(5);
    renderer.zoomAt(before.x, before.y, 2);
    const after = renderer.screenOf(5);
    expect(after.x).toBeCloseTo(before.x, 3);
    expect(after.y).toBeCloseTo(before.y, 3);
  });
});

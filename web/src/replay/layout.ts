/**
 * Where each node of a replay sits: a d3-force layout computed once per session and cached.
 *
 * The whole session is laid out at once (every node any step touches), so nodes keep their place
 * while the replay moves; a step only changes what is highlighted. The simulation runs in slices of
 * a few milliseconds scheduled between frames (`setTimeout(0)`), so the page keeps drawing and
 * answering while a 5,000-node layout settles; each slice reports progress so the canvas can show
 * the layout forming. Nodes start, and are gently pulled, towards one anchor per Kind on a circle:
 * Records of a Kind gather, which reads better than one hairball and converges in fewer ticks.
 *
 * Positions are kept in a small LRU cache keyed by the session and its shape, so leaving a replay
 * and coming back (or changing step, speed, the window size) never lays out again.
 */

import {
  forceLink,
  forceManyBody,
  forceSimulation,
  forceX,
  forceY,
  type SimulationLinkDatum,
  type SimulationNodeDatum,
} from "d3-force";

export interface LayoutInput {
  /** Names the layout in the cache: same key, same positions. */
  key: string;
  /** Each node's Kind (its length is the node count). */
  kinds: string[];
  /** Edge e joins `edgeEnds[2e]` and `edgeEnds[2e + 1]`. */
  edgeEnds: Int32Array;
}

export interface Layout {
  key: string;
  x: Float32Array;
  y: Float32Array;
  /** Ticks run so far, and whether the simulation has settled (or reached `maxTicks`). */
  ticks: number;
  done: boolean;
}

export interface LayoutOptions {
  /** Milliseconds of simulation per slice before yielding to the page. */
  sliceMs?: number;
  maxTicks?: number;
  /** How the next slice is scheduled (tests run slices synchronously). */
  schedule?: (run: () => void) => void;
  now?: () => number;
  /** Called after each slice with the positions so far (the same arrays, updated in place). */
  onProgress?: (layout: Layout) => void;
  cache?: LayoutCache;
}

/** A least-recently-used cache of finished layouts. */
export class LayoutCache {
  private readonly entries = new Map<string, Layout>();

  constructor(private readonly capacity = 8) {}

  get(key: string): Layout | undefined {
    const layout = this.entries.get(key);
    if (layout) {
      this.entries.delete(key);
      this.entries.set(key, layout);
    }
    return layout;
  }

  set(layout: Layout): void {
    this.entries.delete(layout.key);
    this.entries.set(layout.key, layout);
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

export const layoutCache = new LayoutCache();

/** The cache key of a timeline's layout: the session and the shape of its graph. */
export function layoutKey(session: string, nodes: number, edges: number): string {
  return `${session}\u0000${nodes}\u0000${edges}`;
}

/** One anchor per Kind, evenly on a circle whose size grows with the graph. */
export function kindAnchors(kinds: string[]): Map<string, { x: number; y: number }> {
  const names = [...new Set(kinds)].sort();
  const radius = names.length > 1 ? 40 + Math.sqrt(kinds.length) * 9 : 0;
  const anchors = new Map<string, { x: number; y: number }>();
  names.forEach((name, i) => {
    const angle = (2 * Math.PI * i) / names.length;
    anchors.set(name, { x: radius * Math.cos(angle), y: radius * Math.sin(angle) });
  });
  return anchors;
}

interface Node extends SimulationNodeDatum {
  anchorX: number;
  anchorY: number;
}

export interface LayoutRun {
  /** Resolves with the finished layout (at once when it was cached). */
  done: Promise<Layout>;
  cancel(): void;
}

const GOLDEN_ANGLE = Math.PI * (3 - Math.sqrt(5));

export function runLayout(input: LayoutInput, options: LayoutOptions = {}): LayoutRun {
  const cache = options.cache ?? layoutCache;
  const cached = cache.get(input.key);
  if (cached) {
    options.onProgress?.(cached);
    return { done: Promise.resolve(cached), cancel: () => undefined };
  }
  const sliceMs = options.sliceMs ?? 12;
  // Big sessions settle in fewer, coarser ticks (a Barnes-Hut tick of 5,000 nodes costs ~20 ms).
  const big = input.kinds.length > 2000;
  const maxTicks = options.maxTicks ?? (big ? 80 : 200);
  const schedule = options.schedule ?? ((run: () => void) => void setTimeout(run, 0));
  const now = options.now ?? (() => performance.now());

  const count = input.kinds.length;
  const anchors = kindAnchors(input.kinds);
  const perKind = new Map<string, number>();
  const nodes: Node[] = input.kinds.map((kind) => {
    const anchor = anchors.get(kind) ?? { x: 0, y: 0 };
    const n = perKind.get(kind) ?? 0;
    perKind.set(kind, n + 1);
    const r = 4 * Math.sqrt(n + 0.5);
    const a = n * GOLDEN_ANGLE;
    return { x: anchor.x + r * Math.cos(a), y: anchor.y + r * Math.sin(a), anchorX: anchor.x, anchorY: anchor.y };
  });
  const links: SimulationLinkDatum<Node>[] = [];
  for (let e = 0; e + 1 < input.edgeEnds.length; e += 2) {
    links.push({ source: input.edgeEnds[e]!, target: input.edgeEnds[e + 1]! });
  }

  const simulation = forceSimulation<Node>(nodes)
    .alphaDecay(1 - Math.pow(0.001, 1 / maxTicks))
    .force("link", forceLink<Node, SimulationLinkDatum<Node>>(links).distance(18).strength(0.4))
    .force("charge", forceManyBody<Node>().strength(-14).theta(big ? 1.5 : 0.9).distanceMax(160))
    .force("x", forceX<Node>((d) => d.anchorX).strength(0.06))
    .force("y", forceY<Node>((d) => d.anchorY).strength(0.06))
    .stop();

  const layout: Layout = {
    key: input.key,
    x: new Float32Array(count),
    y: new Float32Array(count),
    ticks: 0,
    done: false,
  };
  const copy = () => {
    for (let i = 0; i < count; i++) {
      layout.x[i] = nodes[i]!.x ?? 0;
      layout.y[i] = nodes[i]!.y ?? 0;
    }
  };
  copy();

  let cancelled = false;
  let resolve: (layout: Layout) => void = () => undefined;
  const done = new Promise<Layout>((r) => (resolve = r));

  const slice = () => {
    if (cancelled) return;
    const start = now();
    do {
      simulation.tick();
      layout.ticks += 1;
    } while (layout.ticks < maxTicks && simulation.alpha() > simulation.alphaMin() && now() - start < sliceMs);
    copy();
    layout.done = layout.ticks >= maxTicks || simulation.alpha() <= simulation.alphaMin() || count === 0;
    options.onProgress?.(layout);
    if (layout.done) {
      cache.set(layout);
      resolve(layout);
    } else {
      schedule(slice);
    }
  };
  schedule(slice);
  return {
    done,
    cancel: () => {
      cancelled = true;
    },
  };
}

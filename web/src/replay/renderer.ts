/**
 * The replay's Canvas 2D renderer: the session's graph at one step, drawn by hand so 5,000 nodes stay
 * above 30 frames per second without a GPU.
 *
 * What a frame shows at step s: every node and edge some step up to s touched; those the current step
 * touched are highlighted (full colour, a ring, a label), the earlier ones dimmed; nodes marked absent
 * (they did not exist at the step's Revision) get a red ring; nodes touched only later are not drawn.
 *
 * Why it is fast: one path per style per frame (all dimmed edges in one stroke, the dimmed nodes of
 * one Kind colour in one fill, ...), nodes pre-sorted by colour so a style is a contiguous run, no
 * allocation per frame, squares instead of arcs for the (many) dimmed nodes, and a frame is drawn
 * only when something changed (`render()` returns false otherwise: the step, the positions, the
 * viewport, the size, the hover or the absent set).
 *
 * Paused on a step, an overlay may say how the graph stood at the step's Revision (revisionGraph.ts):
 * the edges not there are not drawn, and the Links and Records there that no step touched are drawn
 * light (the Records hollow, around the node they hang from).
 *
 * Indexes into the typed arrays below are in range by construction (node and edge ids come from the
 * timeline); `!` says so to the compiler (noUncheckedIndexedAccess) without a check per item.
 */

import { EMPTY_OVERLAY, type RevisionOverlay } from "./revisionGraph";
import type { Timeline } from "./timeline";

/** The part of CanvasRenderingContext2D the renderer uses (a fake one is enough for unit tests). */
export interface Ctx2D {
  canvas?: unknown;
  fillStyle: string | CanvasGradient | CanvasPattern;
  strokeStyle: string | CanvasGradient | CanvasPattern;
  lineWidth: number;
  globalAlpha: number;
  font: string;
  setTransform(a: number, b: number, c: number, d: number, e: number, f: number): void;
  clearRect(x: number, y: number, w: number, h: number): void;
  fillRect(x: number, y: number, w: number, h: number): void;
  beginPath(): void;
  moveTo(x: number, y: number): void;
  lineTo(x: number, y: number): void;
  rect(x: number, y: number, w: number, h: number): void;
  arc(x: number, y: number, r: number, start: number, end: number): void;
  fill(): void;
  stroke(): void;
  fillText(text: string, x: number, y: number): void;
}

export const KIND_COLOURS = [
  "#4c6ef5", "#f59f00", "#37b24d", "#e64980", "#15aabf",
  "#7950f2", "#fd7e14", "#82c91e", "#be4bdb", "#868e96",
];
const BACKGROUND = "#ffffff";
const SEEN_EDGE = "#adb5bd";
const CURRENT_EDGE = "#e8590c";
const CURRENT_RING = "#212529";
const ABSENT_RING = "#e03131";
const MAX_LABELS = 40;
const EXTRA_EDGE = "#1971c2";
const GOLDEN_ANGLE = Math.PI * (3 - Math.sqrt(5));

export interface Viewport {
  scale: number;
  tx: number;
  ty: number;
}

export class ReplayRenderer {
  private timeline: Timeline | null = null;
  private x: Float32Array<ArrayBufferLike> = new Float32Array(0);
  private y: Float32Array<ArrayBufferLike> = new Float32Array(0);
  private colour = new Uint8Array(0);
  /** Node ids sorted by colour; `colourStart[c]` .. `colourStart[c + 1]` is colour c's run. */
  private byColour = new Int32Array(0);
  private colourStart = new Int32Array(KIND_COLOURS.length + 1);
  private current = new Uint32Array(0);
  private currentMark = 1;
  private absent = new Set<number>();
  private overlay: RevisionOverlay = EMPTY_OVERLAY;
  /** `hiddenEdge[e]` is 1 when edge e is not there at the overlay's Revision. */
  private hiddenEdge = new Uint8Array(0);
  private extraX = new Float32Array(0);
  private extraY = new Float32Array(0);
  private extraColour: string[] = [];
  private step = 0;
  private hover = -1;
  private width = 300;
  private height = 150;
  private dpr = 1;
  private dirty = true;
  private fitted = false;
  viewport: Viewport = { scale: 1, tx: 0, ty: 0 };
  /** Frames actually drawn (the test reads it to tell drawn frames from skipped ones). */
  draws = 0;

  constructor(private readonly ctx: Ctx2D) {}

  /** A new session: its timeline and the node positions (the arrays the layout updates in place). */
  setScene(timeline: Timeline, x: Float32Array, y: Float32Array): void {
    this.timeline = timeline;
    this.x = x;
    this.y = y;
    const kinds = [...new Set(timeline.nodeKinds)].sort();
    const colourOf = new Map(kinds.map((kind, i) => [kind, i % KIND_COLOURS.length]));
    const count = timeline.nodes.length;
    this.colour = new Uint8Array(count);
    const counts = new Int32Array(KIND_COLOURS.length);
    for (let i = 0; i < count; i++) {
      const c = colourOf.get(timeline.nodeKinds[i]!) ?? 0;
      this.colour[i] = c;
      counts[c]! += 1;
    }
    this.colourStart = new Int32Array(KIND_COLOURS.length + 1);
    for (let c = 0; c < KIND_COLOURS.length; c++) this.colourStart[c + 1] = this.colourStart[c]! + counts[c]!;
    const fill = this.colourStart.slice(0, KIND_COLOURS.length);
    this.byColour = new Int32Array(count);
    for (let i = 0; i < count; i++) this.byColour[fill[this.colour[i]!]!++] = i;
    this.current = new Uint32Array(count);
    this.absent.clear();
    this.overlay = EMPTY_OVERLAY;
    this.hiddenEdge = new Uint8Array(0); // no edge hidden (an index past the end reads undefined)
    this.extraColour = [];
    this.hover = -1;
    this.fitted = false;
    this.setStep(0);
  }

  /** The colour of a Kind, for legends (the same assignment as the nodes). */
  kindColour(kind: string): string {
    const kinds = this.timeline ? [...new Set(this.timeline.nodeKinds)].sort() : [];
    return KIND_COLOURS[Math.max(0, kinds.indexOf(kind)) % KIND_COLOURS.length]!;
  }

  setStep(step: number): void {
    if (!this.timeline) return;
    this.step = step;
    this.currentMark += 1;
    const touched = this.timeline.stepNodes[step];
    if (touched) for (let i = 0; i < touched.length; i++) this.current[touched[i]!] = this.currentMark;
    this.dirty = true;
  }

  /** Nodes that did not exist at the current step's Revision. */
  setAbsent(nodes: Iterable<number>): void {
    this.absent = new Set(nodes);
    this.dirty = true;
  }

  /** The graph as of the current step's Revision (EMPTY_OVERLAY: none). */
  setOverlay(overlay: RevisionOverlay): void {
    if (overlay === this.overlay) return; // while playing, every step clears an overlay already clear
    this.overlay = overlay;
    this.hiddenEdge = new Uint8Array(this.timeline?.edgeRelations.length ?? 0);
    for (const e of overlay.missingEdges) if (e < this.hiddenEdge.length) this.hiddenEdge[e] = 1;
    this.extraX = new Float32Array(overlay.extraNodes.length);
    this.extraY = new Float32Array(overlay.extraNodes.length);
    this.extraColour = overlay.extraNodes.map((node) => this.kindColour(node.kind));
    this.dirty = true;
  }

  /** Where the overlay's extra nodes sit now: around their anchors (which the layout may move). */
  private placeExtra(): void {
    const around = new Map<number, number>();
    this.overlay.extraNodes.forEach((node, i) => {
      const n = around.get(node.anchor) ?? 0;
      around.set(node.anchor, n + 1);
      const r = 14 + 3 * Math.sqrt(n);
      const a = n * GOLDEN_ANGLE;
      this.extraX[i] = (this.x[node.anchor] ?? 0) + r * Math.cos(a);
      this.extraY[i] = (this.y[node.anchor] ?? 0) + r * Math.sin(a);
    });
  }

  setHover(node: number): void {
    if (node !== this.hover) {
      this.hover = node;
      this.dirty = true;
    }
  }

  /** The positions moved (the layout progressed). Refits the view until the user moves it. */
  positionsChanged(): void {
    if (!this.fitted) this.fit(false);
    this.dirty = true;
  }

  resize(width: number, height: number, dpr: number): void {
    if (width === this.width && height === this.height && dpr === this.dpr) return;
    this.width = width;
    this.height = height;
    this.dpr = dpr;
    if (!this.fitted) this.fit(false);
    this.dirty = true;
  }

  /** Fit every node in view; `pin` keeps this view even when the layout moves on. */
  fit(pin = true): void {
    const n = this.x.length;
    if (n === 0) return;
    let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    for (let i = 0; i < n; i++) {
      const x = this.x[i]!;
      const y = this.y[i]!;
      if (x < minX) minX = x;
      if (x > maxX) maxX = x;
      if (y < minY) minY = y;
      if (y > maxY) maxY = y;
    }
    const pad = 24;
    const w = Math.max(maxX - minX, 1);
    const h = Math.max(maxY - minY, 1);
    const scale = Math.min((this.width - 2 * pad) / w, (this.height - 2 * pad) / h, 4);
    this.viewport = {
      scale,
      tx: this.width / 2 - ((minX + maxX) / 2) * scale,
      ty: this.height / 2 - ((minY + maxY) / 2) * scale,
    };
    this.fitted = pin;
    this.dirty = true;
  }

  /** Zoom by `factor` keeping the point under (sx, sy) (CSS pixels) still. */
  zoomAt(sx: number, sy: number, factor: number): void {
    const { scale, tx, ty } = this.viewport;
    const next = Math.min(40, Math.max(0.02, scale * factor));
    const k = next / scale;
    this.viewport = { scale: next, tx: sx - (sx - tx) * k, ty: sy - (sy - ty) * k };
    this.fitted = true;
    this.dirty = true;
  }

  panBy(dx: number, dy: number): void {
    this.viewport = { ...this.viewport, tx: this.viewport.tx + dx, ty: this.viewport.ty + dy };
    this.fitted = true;
    this.dirty = true;
  }

  /** The visible node nearest to (sx, sy) in CSS pixels, within a few pixels; -1 when none. */
  nodeAt(sx: number, sy: number): number {
    const timeline = this.timeline;
    if (!timeline) return -1;
    const { scale, tx, ty } = this.viewport;
    const wx = (sx - tx) / scale;
    const wy = (sy - ty) / scale;
    const reach = 8 / scale;
    let best = -1;
    let bestD = reach * reach;
    for (let i = 0; i < timeline.nodes.length; i++) {
      if (timeline.nodeFirstStep[i]! > this.step) continue;
      const dx = this.x[i]! - wx;
      const dy = this.y[i]! - wy;
      const d = dx * dx + dy * dy;
      if (d <= bestD) {
        bestD = d;
        best = i;
      }
    }
    return best;
  }

  /** Screen position (CSS pixels) of a node, for tooltips. */
  screenOf(node: number): { x: number; y: number } {
    const { scale, tx, ty } = this.viewport;
    return { x: (this.x[node] ?? 0) * scale + tx, y: (this.y[node] ?? 0) * scale + ty };
  }

  /** Force the next `render()` to draw. */
  invalidate(): void {
    this.dirty = true;
  }

  /** Draw the frame if anything changed since the last one; true when it drew. */
  render(): boolean {
    if (!this.dirty) return false;
    this.dirty = false;
    this.draws += 1;
    const ctx = this.ctx;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.globalAlpha = 1;
    ctx.fillStyle = BACKGROUND;
    ctx.fillRect(0, 0, this.width, this.height);
    const timeline = this.timeline;
    if (!timeline) return true;
    const { scale, tx, ty } = this.viewport;
    ctx.setTransform(this.dpr * scale, 0, 0, this.dpr * scale, this.dpr * tx, this.dpr * ty);
    this.drawEdges(timeline, scale);
    this.drawOverlay(scale);
    this.drawNodes(timeline, scale);
    this.drawLabels(timeline, scale);
    return true;
  }

  private drawEdges(timeline: Timeline, scale: number): void {
    const ctx = this.ctx;
    const ends = timeline.edgeEnds;
    const first = timeline.edgeFirstStep;
    const current = timeline.stepEdges[this.step] ?? new Int32Array(0);
    ctx.globalAlpha = 0.45;
    ctx.strokeStyle = SEEN_EDGE;
    ctx.lineWidth = 0.8 / scale;
    ctx.beginPath();
    const hidden = this.hiddenEdge;
    for (let e = 0; e < first.length; e++) {
      if (first[e]! > this.step || hidden[e] === 1) continue;
      const a = ends[2 * e]!;
      const b = ends[2 * e + 1]!;
      ctx.moveTo(this.x[a]!, this.y[a]!);
      ctx.lineTo(this.x[b]!, this.y[b]!);
    }
    ctx.stroke();
    ctx.globalAlpha = 1;
    ctx.strokeStyle = CURRENT_EDGE;
    ctx.lineWidth = 2 / scale;
    ctx.beginPath();
    for (let i = 0; i < current.length; i++) {
      if (hidden[current[i]!] === 1) continue;
      const a = ends[2 * current[i]!]!;
      const b = ends[2 * current[i]! + 1]!;
      ctx.moveTo(this.x[a]!, this.y[a]!);
      ctx.lineTo(this.x[b]!, this.y[b]!);
    }
    ctx.stroke();
  }

  /** The Links and Records at the step's Revision that no step touched: light edges, hollow nodes. */
  private drawOverlay(scale: number): void {
    const overlay = this.overlay;
    if (overlay.extraEdges.length === 0) return;
    this.placeExtra();
    const ctx = this.ctx;
    const at = (id: number): [number, number] =>
      id >= 0 ? [this.x[id]!, this.y[id]!] : [this.extraX[-1 - id]!, this.extraY[-1 - id]!];
    ctx.globalAlpha = 0.6;
    ctx.strokeStyle = EXTRA_EDGE;
    ctx.lineWidth = 0.8 / scale;
    ctx.beginPath();
    for (const [a, b] of overlay.extraEdges) {
      const [ax, ay] = at(a);
      const [bx, by] = at(b);
      ctx.moveTo(ax, ay);
      ctx.lineTo(bx, by);
    }
    ctx.stroke();
    const r = 3 / scale;
    ctx.lineWidth = 1.2 / scale;
    overlay.extraNodes.forEach((_node, i) => {
      ctx.strokeStyle = this.extraColour[i]!;
      ctx.beginPath();
      ctx.moveTo(this.extraX[i]! + r, this.extraY[i]!);
      ctx.arc(this.extraX[i]!, this.extraY[i]!, r, 0, 2 * Math.PI);
      ctx.stroke();
    });
    ctx.globalAlpha = 1;
  }

  private drawNodes(timeline: Timeline, scale: number): void {
    const ctx = this.ctx;
    const first = timeline.nodeFirstStep;
    const mark = this.currentMark;
    // Dimmed squares: larger on a small graph, where they would otherwise be lost.
    const dim = (first.length < 500 ? 3.5 : 2.2) / scale;
    const big = 5 / scale;
    // Dimmed: earlier steps' nodes, one fill per colour.
    ctx.globalAlpha = 0.45;
    for (let c = 0; c < KIND_COLOURS.length; c++) {
      const from = this.colourStart[c]!;
      const to = this.colourStart[c + 1]!;
      if (from === to) continue;
      ctx.fillStyle = KIND_COLOURS[c]!;
      ctx.beginPath();
      for (let j = from; j < to; j++) {
        const i = this.byColour[j]!;
        if (first[i]! > this.step || this.current[i] === mark) continue;
        ctx.rect(this.x[i]! - dim, this.y[i]! - dim, 2 * dim, 2 * dim);
      }
      ctx.fill();
    }
    // Highlighted: the current step's nodes, one fill per colour, then one ring path.
    ctx.globalAlpha = 1;
    const touched = timeline.stepNodes[this.step] ?? new Int32Array(0);
    for (let c = 0; c < KIND_COLOURS.length; c++) {
      let any = false;
      for (let k = 0; k < touched.length; k++) {
        const i = touched[k]!;
        if (this.colour[i] !== c) continue;
        if (!any) {
          ctx.fillStyle = KIND_COLOURS[c]!;
          ctx.beginPath();
          any = true;
        }
        ctx.moveTo(this.x[i]! + big, this.y[i]!);
        ctx.arc(this.x[i]!, this.y[i]!, big, 0, 2 * Math.PI);
      }
      if (any) ctx.fill();
    }
    ctx.strokeStyle = CURRENT_RING;
    ctx.lineWidth = 1.5 / scale;
    ctx.beginPath();
    for (let k = 0; k < touched.length; k++) {
      const i = touched[k]!;
      ctx.moveTo(this.x[i]! + big, this.y[i]!);
      ctx.arc(this.x[i]!, this.y[i]!, big, 0, 2 * Math.PI);
    }
    ctx.stroke();
    // Absent at this Revision: a red ring.
    if (this.absent.size > 0) {
      ctx.strokeStyle = ABSENT_RING;
      ctx.lineWidth = 2 / scale;
      ctx.beginPath();
      const r = big + 3 / scale;
      for (const i of this.absent) {
        if (i < 0 || i >= first.length || first[i]! > this.step) continue;
        ctx.moveTo(this.x[i]! + r, this.y[i]!);
        ctx.arc(this.x[i]!, this.y[i]!, r, 0, 2 * Math.PI);
      }
      ctx.stroke();
    }
    if (this.hover >= 0 && this.hover < first.length) {
      ctx.strokeStyle = CURRENT_EDGE;
      ctx.lineWidth = 2 / scale;
      ctx.beginPath();
      const r = big + 5 / scale;
      const hx = this.x[this.hover]!;
      const hy = this.y[this.hover]!;
      ctx.moveTo(hx + r, hy);
      ctx.arc(hx, hy, r, 0, 2 * Math.PI);
      ctx.stroke();
    }
  }

  private drawLabels(timeline: Timeline, scale: number): void {
    const touched = timeline.stepNodes[this.step];
    if (!touched || touched.length === 0) return;
    const ctx = this.ctx;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.globalAlpha = 1;
    ctx.fillStyle = CURRENT_RING;
    ctx.font = "11px system-ui, sans-serif";
    const { tx, ty } = this.viewport;
    const count = Math.min(touched.length, MAX_LABELS);
    for (let k = 0; k < count; k++) {
      const i = touched[k]!;
      ctx.fillText(timeline.nodes[i]!, this.x[i]! * scale + tx + 8, this.y[i]! * scale + ty - 6);
    }
  }
}

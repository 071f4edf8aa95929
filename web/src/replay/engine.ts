/**
 * The replay engine: the player, the layout and the renderer driven by one `requestAnimationFrame`
 * loop, outside React.
 *
 * Each frame advances the player by the time that passed, tells the renderer the new step when it
 * changed, and lets the renderer draw if anything changed (it skips the frame otherwise). React only
 * hears about it through `onChange`, at most every `notifyMs` while playing (the side panel and the
 * slider need not follow 60 steps per second; the canvas does), and at once when paused.
 *
 * The canvas carries what the browser test reads: `data-step` (0-based), `data-layout`
 * (`running` | `done`), `data-draws` (frames drawn, as opposed to frames skipped) and `data-draw-ms`
 * (a moving mean of the time one draw takes).
 */

import { runLayout, layoutKey, type LayoutRun } from "./layout";
import { initialPlayer, pause, play, seek, setSpeed, stepBy, tick, type PlayerState } from "./player";
import { ReplayRenderer } from "./renderer";
import type { Timeline } from "./timeline";

export interface EngineOptions {
  step?: number;
  speed?: number;
  notifyMs?: number;
  onChange?: (state: PlayerState) => void;
  onLayout?: (ticks: number, done: boolean) => void;
}

export class ReplayEngine {
  readonly renderer: ReplayRenderer;
  private state: PlayerState;
  private frame = 0;
  private last = 0;
  private lastNotify = 0;
  private notified: PlayerState | null = null;
  private layoutRun: LayoutRun | null = null;
  private resizeObserver: ResizeObserver | null = null;
  private drawMs = 0;

  constructor(
    private readonly canvas: HTMLCanvasElement,
    readonly timeline: Timeline,
    private readonly options: EngineOptions = {},
  ) {
    const ctx = canvas.getContext("2d", { alpha: false });
    if (!ctx) throw new Error("this browser gives no 2D canvas context");
    this.renderer = new ReplayRenderer(ctx);
    this.state = initialPlayer(timeline.steps.length, options.step ?? 0, options.speed ?? 2);
    this.fitCanvas();
    this.resizeObserver = new ResizeObserver(() => this.fitCanvas());
    this.resizeObserver.observe(canvas);

    const key = layoutKey(timeline.session, timeline.nodes.length, timeline.edgeRelations.length);
    canvas.dataset.layout = "running";
    let sceneSet = false;
    this.layoutRun = runLayout(
      { key, kinds: timeline.nodeKinds, edgeEnds: timeline.edgeEnds },
      {
        onProgress: (layout) => {
          if (!sceneSet) {
            this.renderer.setScene(timeline, layout.x, layout.y);
            this.renderer.setStep(this.state.step);
            sceneSet = true;
          }
          this.renderer.positionsChanged();
          if (layout.done) canvas.dataset.layout = "done";
          options.onLayout?.(layout.ticks, layout.done);
        },
      },
    );
    canvas.dataset.step = String(this.state.step);
    this.frame = requestAnimationFrame(this.loop);
  }

  get player(): PlayerState {
    return this.state;
  }

  private fitCanvas(): void {
    const rect = this.canvas.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    const width = Math.max(1, Math.round(rect.width));
    const height = Math.max(1, Math.round(rect.height));
    if (this.canvas.width !== Math.round(width * dpr) || this.canvas.height !== Math.round(height * dpr)) {
      this.canvas.width = Math.round(width * dpr);
      this.canvas.height = Math.round(height * dpr);
      this.renderer.invalidate();
    }
    this.renderer.resize(width, height, dpr);
  }

  private loop = (now: number): void => {
    const elapsed = this.last ? now - this.last : 0;
    this.last = now;
    this.apply(tick(this.state, elapsed), now);
    const start = performance.now();
    if (this.renderer.render()) {
      // What the browser test reports: frames drawn, and the mean time a draw takes (ms).
      this.drawMs = this.drawMs * 0.9 + (performance.now() - start) * 0.1;
      this.canvas.dataset.draws = String(this.renderer.draws);
      this.canvas.dataset.drawMs = this.drawMs.toFixed(2);
    }
    this.frame = requestAnimationFrame(this.loop);
  };

  private apply(next: PlayerState, now = performance.now()): void {
    const previous = this.state;
    if (next === previous) return;
    this.state = next;
    if (next.step !== previous.step) {
      this.renderer.setStep(next.step);
      this.canvas.dataset.step = String(next.step);
    }
    const urgent = !next.playing || next.playing !== previous.playing || next.speed !== previous.speed;
    if (urgent || now - this.lastNotify >= (this.options.notifyMs ?? 120)) this.notify(now);
  }

  private notify(now: number): void {
    if (this.notified === this.state) return;
    this.notified = this.state;
    this.lastNotify = now;
    this.options.onChange?.(this.state);
  }

  play(): void {
    this.last = 0;
    this.apply(play(this.state));
  }

  pause(): void {
    this.apply(pause(this.state));
  }

  seek(step: number): void {
    this.apply(seek(this.state, step));
  }

  stepBy(delta: number): void {
    this.apply(stepBy(this.state, delta));
  }

  setSpeed(speed: number): void {
    this.apply(setSpeed(this.state, speed));
  }

  destroy(): void {
    cancelAnimationFrame(this.frame);
    this.layoutRun?.cancel();
    this.resizeObserver?.disconnect();
  }
}

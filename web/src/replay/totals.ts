/**
 * A session's totals for the trace header, and the steps the scrubber marks: computed once per
 * session from its steps.
 */

import type { Timeline } from "./timeline";
import type { SessionStep } from "./types";

export interface SessionTotals {
  steps: number;
  errors: number;
  /** Sum of the steps' latencies. */
  latencyMs: number;
  /** From the first step to the last, by their times. */
  spanMs: number;
  /** Distinct Records and Links any step touched (the canvas's nodes and edges). */
  records: number;
  links: number;
  /** Steps that wrote (made at least one Revision), the Revisions they made and the Records changed. */
  writes: number;
  revisions: number;
  changed: number;
  /** Bytes of the answers (steps kept before sizes were recorded count 0). */
  bytes: number;
  /** Proposals the session opened or added to, each with the Domain and the first step that named it. */
  proposals: Array<{ id: string; domain: string; step: number }>;
}

/** Whether a step failed (answered 400 or above). */
export const failed = (step: SessionStep): boolean => step.status >= 400;

/** Whether a step wrote: it made a Revision or names what it changed. */
export const wrote = (step: SessionStep): boolean => (step.revisions?.length ?? 0) > 0 || (step.changed?.length ?? 0) > 0;

export function sessionTotals(timeline: Timeline): SessionTotals {
  const totals: SessionTotals = {
    steps: timeline.steps.length,
    errors: 0,
    latencyMs: 0,
    spanMs: 0,
    records: timeline.nodes.length,
    links: timeline.edgeRelations.length,
    writes: 0,
    revisions: 0,
    changed: 0,
    bytes: 0,
    proposals: [],
  };
  const revisions = new Set<string>();
  const changed = new Set<string>();
  const proposals = new Set<string>();
  timeline.steps.forEach((step, s) => {
    if (failed(step)) totals.errors += 1;
    totals.latencyMs += Number.isFinite(step.latency_ms) ? step.latency_ms : 0;
    totals.bytes += step.bytes ?? 0;
    if (wrote(step)) totals.writes += 1;
    for (const revision of step.revisions ?? []) revisions.add(revision);
    for (const change of step.changed ?? []) changed.add(change.ref);
    if (step.proposal && !proposals.has(step.proposal)) {
      proposals.add(step.proposal);
      totals.proposals.push({ id: step.proposal, domain: step.domain ?? "", step: s });
    }
  });
  totals.revisions = revisions.size;
  totals.changed = changed.size;
  const first = timeline.steps[0];
  const last = timeline.steps[timeline.steps.length - 1];
  if (first && last) {
    const span = Date.parse(last.at) - Date.parse(first.at);
    totals.spanMs = Number.isFinite(span) ? Math.max(0, span) : 0;
  }
  return totals;
}

/** Where each marked step sits on the scrubber, 0 to 1 (the slider runs from step 0 to the last). */
export function markPositions(steps: number, marked: readonly number[]): number[] {
  if (steps <= 1) return marked.map(() => 0);
  return marked.map((s) => Math.min(1, Math.max(0, s / (steps - 1))));
}

/** The indexes of the steps that failed. */
export function failedSteps(timeline: Timeline): number[] {
  const found: number[] = [];
  timeline.steps.forEach((step, s) => failed(step) && found.push(s));
  return found;
}

/** "1 error", "3 errors": a count with its noun. */
export function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/** "1.2 kB", "3.4 MB": an answer's size. */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** "830 ms", "4.2 s", "3 min 5 s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms - minutes * 60_000) / 1000)} s`;
}

/**
 * Playback: which step the replay shows as time passes. A pure state machine (no timers) so it can be
 * tested without a browser; the page drives it from `requestAnimationFrame` with the frame's time.
 *
 * `speed` is in steps per second. Time is accumulated, so at 60 steps/s on a 30 fps screen two steps
 * pass per frame, and at 0.5 steps/s one step passes every two seconds. Playing stops at the last
 * step; playing again from the last step starts over.
 */

export const SPEEDS = [0.5, 1, 2, 5, 10, 30, 60, 120] as const;

export interface PlayerState {
  step: number;
  steps: number;
  playing: boolean;
  speed: number;
  /** Milliseconds accumulated towards the next step. */
  carry: number;
}

export function initialPlayer(steps: number, step = 0, speed = 2): PlayerState {
  return { step: clamp(step, steps), steps, playing: false, speed, carry: 0 };
}

function clamp(step: number, steps: number): number {
  if (steps <= 0 || !Number.isFinite(step)) return 0;
  return Math.min(steps - 1, Math.max(0, Math.trunc(step)));
}

export function play(state: PlayerState): PlayerState {
  if (state.steps === 0) return state;
  const step = state.step >= state.steps - 1 ? 0 : state.step;
  return { ...state, step, playing: true, carry: 0 };
}

export function pause(state: PlayerState): PlayerState {
  return { ...state, playing: false, carry: 0 };
}

/** Go to a step (a scrub, a permalink, step back/forward); pauses. */
export function seek(state: PlayerState, step: number): PlayerState {
  return { ...state, step: clamp(step, state.steps), playing: false, carry: 0 };
}

export function stepBy(state: PlayerState, delta: number): PlayerState {
  return seek(state, state.step + delta);
}

export function setSpeed(state: PlayerState, speed: number): PlayerState {
  return Number.isFinite(speed) && speed > 0 ? { ...state, speed } : state;
}

/** Advance by `elapsedMs` of wall time; returns the same object when nothing changed. */
export function tick(state: PlayerState, elapsedMs: number): PlayerState {
  if (!state.playing || !(elapsedMs > 0)) return state;
  const period = 1000 / state.speed;
  const carry = state.carry + Math.min(elapsedMs, 1000);
  const advance = Math.floor(carry / period);
  if (advance === 0) return { ...state, carry };
  const step = Math.min(state.steps - 1, state.step + advance);
  const atEnd = step >= state.steps - 1;
  return { ...state, step, carry: atEnd ? 0 : carry - advance * period, playing: !atEnd };
}

import { describe, expect, it } from "vitest";
import { initialPlayer, pause, play, seek, setSpeed, stepBy, tick } from "./player";

describe("player", () => {
  it("advances by speed, carrying the remainder between frames", () => {
    let state = play(initialPlayer(100, 0, 10)); // 10 steps/s: one step per 100 ms
    state = tick(state, 60);
    expect(state.step).toBe(0);
    state = tick(state, 60);
    expect(state.step).toBe(1);
    state = tick(state, 250);
    expect(state.step).toBe(3);
  });

  it("passes several steps in one frame when fast, and stops at the end", () => {
    let state = play(initialPlayer(5, 0, 120));
    state = tick(state, 1000 / 30);
    expect(state.step).toBe(4);
    expect(state.playing).toBe(false);
    expect(play(state).step).toBe(0);
  });

  it("does nothing while paused and returns the same state", () => {
    const state = initialPlayer(10, 3);
    expect(tick(state, 500)).toBe(state);
    expect(tick(pause(play(state)), 500).step).toBe(3);
  });

  it("seeks and steps within bounds, pausing", () => {
    const state = play(initialPlayer(10, 3));
    expect(seek(state, 42).step).toBe(9);
    expect(seek(state, 42).playing).toBe(false);
    expect(stepBy(state, -5).step).toBe(0);
    expect(stepBy(state, 1).step).toBe(4);
    expect(initialPlayer(0, 5).step).toBe(0);
  });

  it("refuses a speed that is not positive", () => {
    const state = initialPlayer(10);
    expect(setSpeed(state, 0)).toBe(state);
    expect(setSpeed(state, 5).speed).toBe(5);
  });
});

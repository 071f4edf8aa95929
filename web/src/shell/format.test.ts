import { describe, expect, it } from "vitest";
import { formatTime, formatValue, shortRevision, splitRef } from "./format";

describe("format helpers", () => {
  it("shortens Revisions", () => {
    expect(shortRevision("0f543947a1732bcdb979fbc76802de4bcb103ec4798cc99d9933028cc4918496")).toBe("0f543947a173");
    expect(shortRevision(null)).toBe("");
  });

  it("prints times in UTC and leaves unreadable text alone", () => {
    expect(formatTime("2026-12-01T17:29:18.945322Z")).toBe("2026-12-01 17:29:18 UTC");
    expect(formatTime("soon")).toBe("soon");
  });

  it("prints canonical values", () => {
    expect(formatValue("90")).toBe("90");
    expect(formatValue(true)).toBe("true");
    expect(formatValue(null)).toBe("—");
    expect(formatValue(["a", 1])).toBe('["a",1]');
  });

  it("splits references at the first slash", () => {
    expect(splitRef("Supplier/S-1001")).toEqual({ kind: "Supplier", key: "S-1001" });
    expect(splitRef("Doc/a/b")).toEqual({ kind: "Doc", key: "a/b" });
    expect(splitRef("nokey")).toBeNull();
    expect(splitRef("Kind/")).toBeNull();
  });
});

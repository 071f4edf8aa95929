import { describe, expect, it } from "vitest";
import { keyRef, orphanRefs } from "./examples";

describe("health example keys", () => {
  it("names a key of a Kind", () => {
    expect(keyRef("Supplier", "S-1003")).toEqual({ kind: "Supplier", key: "S-1003" });
  });

  it("splits an orphan Link into its two ends", () => {
    expect(orphanRefs("P-10003->PL-01", "Part", "Plant")).toEqual([
      { kind: "Part", key: "P-10003" },
      { kind: "Plant", key: "PL-01" },
    ]);
    expect(orphanRefs("P-1", "Part", "Plant")).toEqual([{ kind: "Part", key: "P-1" }]);
  });
});

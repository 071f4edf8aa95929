import { describe, expect, it } from "vitest";
import { defaultState, emptyConfig, type LabState } from "./config";
import { decodeLabState, encodeLabState } from "./urlState";

const state: LabState = {
  question: "seals from risky suppliers, in Poznań & Łódź",
  configs: [
    { ...emptyConfig("lens"), lens: "supplier_risk", depth: 1, budgetTokens: 1500, includeLineage: false },
    {
      ...emptyConfig(),
      traits: ["Located", "Priced"],
      kinds: ["Part"],
      relations: ["supplied_by", "odd,name&x=y"],
      limit: 25,
      includeSchema: true,
      includeRecentChanges: false,
      queryVector: [0.25, -1, 3e-7],
    },
    emptyConfig(),
  ],
};

describe("lab URL state", () => {
  it("round-trips a comparison, text with commas and ampersands included", () => {
    const params = encodeLabState(state);
    const decoded = decodeLabState(new URLSearchParams(params.toString()));
    expect(decoded.warnings).toEqual([]);
    expect(decoded.state).toEqual(state);
  });

  it("writes readable keys and only what differs from the defaults", () => {
    const params = encodeLabState(state);
    expect(params.get("c0.lens")).toBe("supplier_risk");
    expect(params.getAll("c1.trait")).toEqual(["Located", "Priced"]);
    expect(params.get("c1.vec")).toBe("0.25,-1,3e-7");
    expect(params.get("n")).toBe("3");
    expect([...params.keys()].some((key) => key.startsWith("c2."))).toBe(false);
  });

  it("keeps the keys it does not own and replaces its own", () => {
    const before = new URLSearchParams("branch=dev&at=abc&q=old&c3.lens=gone");
    const params = encodeLabState(defaultState(), before);
    expect(params.get("branch")).toBe("dev");
    expect(params.get("at")).toBe("abc");
    expect(params.get("q")).toBeNull();
    expect(params.get("c3.lens")).toBeNull();
  });

  it("restores two empty configurations from an empty query", () => {
    expect(decodeLabState(new URLSearchParams("")).state).toEqual(defaultState());
  });

  it("drops what does not parse and says so", () => {
    const decoded = decodeLabState(
      new URLSearchParams("n=9&c0.depth=deep&c0.budget=-3&c1.schema=maybe&c1.vec=1,x&c5.lens=l&c0.colour=red&c1.limit=0"),
    );
    expect(decoded.state.configs).toHaveLength(2);
    expect(decoded.state.configs[0]!.depth).toBeNull();
    expect(decoded.state.configs[0]!.budgetTokens).toBeNull();
    expect(decoded.state.configs[1]!.includeSchema).toBeNull();
    expect(decoded.state.configs[1]!.queryVector).toBeNull();
    expect(decoded.state.configs[1]!.limit).toBeNull();
    expect(decoded.warnings).toHaveLength(8);
    expect(decoded.warnings.join("\n")).toContain('configuration A depth "deep" is not a whole number');
  });

  it("grows to the highest configuration named", () => {
    const decoded = decodeLabState(new URLSearchParams("n=2&c2.lens=x"));
    expect(decoded.state.configs.map((c) => c.lens)).toEqual(["", "", "x"]);
  });
});

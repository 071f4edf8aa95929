import { describe, expect, it } from "vitest";
import {
  conditionFromPredicate,
  decodeQueryState,
  emptyQuery,
  encodeQueryState,
  firstPage,
  isPlainListing,
  nextOrder,
  nextPage,
  pageCursor,
  previousPage,
  toCountBody,
  toQueryBody,
  type QueryState,
  type ValueType,
} from "./queryModel";

const point = { branch: "", at: "" };

describe("toQueryBody", () => {
  it("sends only the Kind and a page size for an empty builder", () => {
    expect(toQueryBody(emptyQuery("Supplier"), point)).toEqual({ kind: "Supplier", limit: 50 });
  });

  it("writes one condition as a bare predicate and several under and/or", () => {
    const state: QueryState = {
      ...emptyQuery("Supplier"),
      conditions: [{ attr: "country", op: "eq", value: "PL", negate: false }],
    };
    expect(toQueryBody(state, point).where).toEqual({ attr: "country", op: "eq", value: "PL" });
    state.conditions.push({ attr: "status", op: "eq", value: "blocked", negate: true });
    expect(toQueryBody(state, point).where).toEqual({
      and: [
        { attr: "country", op: "eq", value: "PL" },
        { not: { attr: "status", op: "eq", value: "blocked" } },
      ],
    });
    expect(toQueryBody({ ...state, combine: "or" }, point).where).toHaveProperty("or");
  });

  it("splits `in` values and reads `is_null` as a boolean", () => {
    const state: QueryState = {
      ...emptyQuery("Part"),
      combine: "and",
      conditions: [
        { attr: "category", op: "in", value: "seal, gasket,, ", negate: false },
        { attr: "unit_cost", op: "is_null", value: "false", negate: false },
      ],
    };
    expect(toQueryBody(state, point).where).toEqual({
      and: [
        { attr: "category", op: "in", value: ["seal", "gasket"] },
        { attr: "unit_cost", op: "is_null", value: false },
      ],
    });
  });

  it("skips conditions without an Attribute", () => {
    const state = { ...emptyQuery("Part"), conditions: [{ attr: "", op: "eq" as const, value: "x", negate: false }] };
    expect(toQueryBody(state, point)).not.toHaveProperty("where");
  });

  it("keeps select, order and cursor for Records, and drops them for a group-by", () => {
    const state: QueryState = { ...emptyQuery("Supplier"), select: ["legal_name"], orderBy: ["-risk_score"], limit: 20 };
    expect(toQueryBody(state, point, "abc")).toEqual({
      kind: "Supplier",
      select: ["legal_name"],
      order_by: ["-risk_score"],
      limit: 20,
      cursor: "abc",
    });
    expect(toQueryBody({ ...state, groupBy: "country" }, point, "abc")).toEqual({
      kind: "Supplier",
      aggregate: { group_by: "country" },
    });
  });

  it("queries a Trait and carries the read point", () => {
    const state: QueryState = { ...emptyQuery("Located"), target: "trait" };
    expect(toQueryBody(state, { branch: "work", at: "d76baf4e84f6" })).toEqual({
      trait: "Located",
      limit: 50,
      branch: "work",
      at: "d76baf4e84f6",
    });
  });
});

describe("conditionFromPredicate", () => {
  it("turns a resolve predicate into an editable condition", () => {
    expect(conditionFromPredicate({ attr: "severity", op: "eq", value: "high" })).toEqual({
      attr: "severity",
      op: "eq",
      value: "high",
      negate: false,
    });
    expect(conditionFromPredicate({ attr: "status", op: "in", value: ["open", "new"] }).value).toBe("open, new");
    expect(conditionFromPredicate({ attr: "x", op: "weird", value: null })).toMatchObject({ op: "eq", value: "" });
  });
});

describe("query state in the URL", () => {
  it("round-trips and refuses garbage", () => {
    const state: QueryState = { ...emptyQuery("Supplier"), select: ["city"] };
    expect(decodeQueryState(encodeQueryState(state))).toEqual(state);
    expect(decodeQueryState("{not json")).toBeNull();
    expect(decodeQueryState(JSON.stringify({ nope: 1 }))).toBeNull();
    expect(decodeQueryState(null)).toBeNull();
  });
});

describe("typed values, totals, sorting and pages both ways", () => {
  const typeOf = (attr: string): ValueType => (attr === "risk_score" ? "integer" : attr === "unit_cost" ? "decimal" : "text");

  it("sends an integer as a number and a decimal as its text", () => {
    const state: QueryState = {
      ...emptyQuery("Supplier"),
      conditions: [
        { attr: "risk_score", op: "ge", value: "50", negate: false },
        { attr: "unit_cost", op: "lt", value: "1.50", negate: false },
        { attr: "risk_score", op: "in", value: "1, 2", negate: false },
      ],
    };
    expect(toQueryBody(state, point, "", typeOf).where).toEqual({
      and: [
        { attr: "risk_score", op: "ge", value: 50 },
        { attr: "unit_cost", op: "lt", value: "1.50" },
        { attr: "risk_score", op: "in", value: [1, 2] },
      ],
    });
  });

  it("counts the same query without its page, order or selection", () => {
    const state: QueryState = { ...emptyQuery("Supplier"), orderBy: ["-risk_score"], select: ["city"], limit: 5 };
    expect(toCountBody(state, { branch: "b", at: "" })).toEqual({ kind: "Supplier", branch: "b", aggregate: { count: true } });
  });

  it("lists a Kind plainly only without conditions, selection or order", () => {
    expect(isPlainListing(emptyQuery("Supplier"))).toBe(true);
    expect(isPlainListing({ ...emptyQuery("Supplier"), orderBy: ["city"] })).toBe(false);
    expect(isPlainListing({ ...emptyQuery("Supplier"), target: "trait" })).toBe(false);
  });

  it("sorts ascending, descending, then not at all", () => {
    expect(nextOrder([], "city")).toEqual(["city"]);
    expect(nextOrder(["city"], "city")).toEqual(["-city"]);
    expect(nextOrder(["-city"], "city")).toEqual([]);
    expect(nextOrder(["-city"], "tier")).toEqual(["tier"]);
  });

  it("goes back to the cursor before", () => {
    const trail = nextPage(nextPage(firstPage, "c2"), "c3");
    expect(pageCursor(trail)).toBe("c3");
    expect(pageCursor(previousPage(trail))).toBe("c2");
    expect(previousPage(firstPage)).toBe(firstPage);
  });
});

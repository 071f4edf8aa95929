/**
 * The query builder's state and its translation to the query DSL (docs/query.md).
 *
 * The builder edits a flat list of conditions combined with `and` (or `or`), each a predicate
 * `{attr, op, value}`, optionally negated; plus select, order (Attributes, `-` for descending),
 * group-by and a page size. `toQueryBody` writes the DSL the API takes; nothing is checked here
 * beyond the shape: the API says what is wrong with a query (422 with the member's path), and the
 * screen shows that.
 */

export const OPERATORS = ["eq", "ne", "lt", "le", "gt", "ge", "in", "contains", "prefix", "is_null"] as const;
export type Operator = (typeof OPERATORS)[number];

export const OPERATOR_LABELS: Record<Operator, string> = {
  eq: "=",
  ne: "≠",
  lt: "<",
  le: "≤",
  gt: ">",
  ge: "≥",
  in: "in (comma-separated)",
  contains: "contains",
  prefix: "starts with",
  is_null: "is missing",
};

export interface Condition {
  attr: string;
  op: Operator;
  /** As typed: one value, a comma-separated list for `in`, "true"/"false" for `is_null`. */
  value: string;
  negate: boolean;
}

export interface QueryState {
  /** "kind" queries one Kind; "trait" every readable Kind implementing a Trait. */
  target: "kind" | "trait";
  name: string;
  combine: "and" | "or";
  conditions: Condition[];
  select: string[];
  /** Attribute names, `-name` for descending. */
  orderBy: string[];
  groupBy: string;
  limit: number;
}

export type Filter = { and: Filter[] } | { or: Filter[] } | { not: Filter } | { attr: string; op: string; value?: unknown };

export interface QueryBody {
  kind?: string;
  trait?: string;
  where?: Filter;
  select?: string[];
  order_by?: string[];
  limit?: number;
  cursor?: string;
  aggregate?: { group_by: string } | { count: true };
  branch?: string;
  at?: string;
}

export const emptyQuery = (name = ""): QueryState => ({
  target: "kind",
  name,
  combine: "and",
  conditions: [],
  select: [],
  orderBy: [],
  groupBy: "",
  limit: 50,
});

/** The value a condition sends: a list for `in`, a boolean for `is_null`, else the text as typed. */
export function conditionValue(condition: Condition): unknown {
  if (condition.op === "in") {
    return condition.value
      .split(",")
      .map((v) => v.trim())
      .filter((v) => v !== "");
  }
  if (condition.op === "is_null") return condition.value.trim().toLowerCase() !== "false";
  return condition.value;
}

export function toFilter(condition: Condition): Filter {
  const predicate = { attr: condition.attr, op: condition.op, value: conditionValue(condition) };
  return condition.negate ? { not: predicate } : predicate;
}

/** The `where` of the state: undefined without conditions, the predicate alone for one. */
export function toWhere(state: QueryState): Filter | undefined {
  const filters = state.conditions.filter((c) => c.attr !== "").map(toFilter);
  if (filters.length === 0) return undefined;
  if (filters.length === 1) return filters[0];
  return state.combine === "and" ? { and: filters } : { or: filters };
}

/** The DSL body of the builder's state at a read point (and a page cursor). */
export function toQueryBody(state: QueryState, point: { branch: string; at: string }, cursor = ""): QueryBody {
  const body: QueryBody = state.target === "kind" ? { kind: state.name } : { trait: state.name };
  const where = toWhere(state);
  if (where) body.where = where;
  if (state.groupBy) {
    body.aggregate = { group_by: state.groupBy };
  } else {
    if (state.select.length) body.select = [...state.select];
    if (state.orderBy.length) body.order_by = [...state.orderBy];
    body.limit = state.limit;
    if (cursor) body.cursor = cursor;
  }
  if (point.branch) body.branch = point.branch;
  if (point.at) body.at = point.at;
  return body;
}

/** A condition from a resolve candidate's predicate (`{attr, op, value}`), ready for the builder. */
export function conditionFromPredicate(predicate: { attr: string; op: string; value?: unknown }): Condition {
  const op = (OPERATORS as readonly string[]).includes(predicate.op) ? (predicate.op as Operator) : "eq";
  const value = Array.isArray(predicate.value)
    ? predicate.value.map(String).join(", ")
    : predicate.value === undefined || predicate.value === null
      ? ""
      : String(predicate.value);
  return { attr: predicate.attr, op, value, negate: false };
}

/** Builder state in the URL (`?q=`), so a query is shareable; a bad or old value gives null. */
export function encodeQueryState(state: QueryState): string {
  return JSON.stringify(state);
}

export function decodeQueryState(text: string | null): QueryState | null {
  if (!text) return null;
  try {
    const parsed = JSON.parse(text) as Partial<QueryState>;
    if (typeof parsed !== "object" || parsed === null || typeof parsed.name !== "string") return null;
    const base = emptyQuery(parsed.name);
    return {
      ...base,
      ...parsed,
      conditions: Array.isArray(parsed.conditions) ? parsed.conditions : [],
      select: Array.isArray(parsed.select) ? parsed.select : [],
      orderBy: Array.isArray(parsed.orderBy) ? parsed.orderBy : [],
    };
  } catch {
    return null;
  }
}

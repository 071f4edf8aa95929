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

/** How a condition's value is typed (from its Attribute's type; text when unknown). */
export type ValueType = "text" | "enum" | "date" | "integer" | "decimal" | "boolean";

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

/** One value as its type sends it: an integer as a number, a flag as a boolean, else the text. */
function typedValue(text: string, type: ValueType): unknown {
  const trimmed = text.trim();
  if (type === "integer" && /^-?\d+$/.test(trimmed)) return Number(trimmed);
  if (type === "boolean" && (trimmed === "true" || trimmed === "false")) return trimmed === "true";
  if (type === "decimal") return trimmed;
  return text;
}

/** The value a condition sends: a list for `in`, a boolean for `is_null`, else the value as its
 * Attribute's type sends it (`typeOf` names it; text when unknown). */
export function conditionValue(condition: Condition, type: ValueType = "text"): unknown {
  if (condition.op === "in") {
    return condition.value
      .split(",")
      .map((v) => v.trim())
      .filter((v) => v !== "")
      .map((v) => typedValue(v, type));
  }
  if (condition.op === "is_null") return condition.value.trim().toLowerCase() !== "false";
  return typedValue(condition.value, type);
}

/** An Attribute's value type by name (text when the schema does not say). */
export type TypeOf = (attr: string) => ValueType;
const textType: TypeOf = () => "text";

export function toFilter(condition: Condition, typeOf: TypeOf = textType): Filter {
  const predicate = { attr: condition.attr, op: condition.op, value: conditionValue(condition, typeOf(condition.attr)) };
  return condition.negate ? { not: predicate } : predicate;
}

/** The `where` of the state: undefined without conditions, the predicate alone for one. */
export function toWhere(state: QueryState, typeOf: TypeOf = textType): Filter | undefined {
  const filters = state.conditions.filter((c) => c.attr !== "").map((c) => toFilter(c, typeOf));
  if (filters.length === 0) return undefined;
  if (filters.length === 1) return filters[0];
  return state.combine === "and" ? { and: filters } : { or: filters };
}

/** The DSL body of the builder's state at a read point (and a page cursor). */
export function toQueryBody(
  state: QueryState,
  point: { branch: string; at: string },
  cursor = "",
  typeOf: TypeOf = textType,
): QueryBody {
  const body: QueryBody = state.target === "kind" ? { kind: state.name } : { trait: state.name };
  const where = toWhere(state, typeOf);
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

/** The same query counting its matches (`aggregate: {count: true}`): the total beside the pages. */
export function toCountBody(state: QueryState, point: { branch: string; at: string }, typeOf: TypeOf = textType): QueryBody {
  const { select: _s, order_by: _o, limit: _l, cursor: _c, aggregate: _a, ...rest } = toQueryBody(
    { ...state, groupBy: "" },
    point,
    "",
    typeOf,
  );
  return { ...rest, aggregate: { count: true } };
}

/** A Kind's plain listing (no condition, selection or order): `GET .../kinds/{kind}/records` pages it. */
export function isPlainListing(state: QueryState): boolean {
  return (
    state.target === "kind" &&
    state.conditions.every((c) => c.attr === "") &&
    state.select.length === 0 &&
    state.orderBy.length === 0 &&
    !state.groupBy
  );
}

/** The next order when a column's header is pressed: ascending, descending, then none. */
export function nextOrder(orderBy: string[], column: string): string[] {
  if (orderBy[0] === column) return [`-${column}`];
  if (orderBy[0] === `-${column}`) return [];
  return [column];
}

/** The cursors of the pages seen (`""` the first): going back pops, going on pushes. */
export interface PageTrail {
  cursors: string[];
}

export const firstPage: PageTrail = { cursors: [""] };
export const pageCursor = (trail: PageTrail): string => trail.cursors[trail.cursors.length - 1] ?? "";
export const nextPage = (trail: PageTrail, cursor: string): PageTrail => ({ cursors: [...trail.cursors, cursor] });
export const previousPage = (trail: PageTrail): PageTrail =>
  trail.cursors.length > 1 ? { cursors: trail.cursors.slice(0, -1) } : trail;

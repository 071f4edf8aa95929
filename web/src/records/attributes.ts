/** The Attributes a query may name (those of the chosen Kind, or of the chosen Trait), and how a
 * condition on each is typed: an enum's values as a choice, a date as a date, a number compared. */
import type { AttributeSpec, Schema } from "../api/types";
import { OPERATORS, type Operator, type QueryState, type ValueType } from "./queryModel";

export function queryAttributes(schema: Schema | undefined, state: Pick<QueryState, "target" | "name">): string[] {
  if (!schema) return [];
  if (state.target === "kind") return Object.keys(schema.kinds.find((k) => k.name === state.name)?.attributes ?? {});
  return Object.keys(schema.traits.find((t) => t.name === state.name)?.attributes ?? {});
}

/** The specs of the Attributes a query may name, by name. */
export function attributeSpecs(schema: Schema | undefined, state: Pick<QueryState, "target" | "name">): Record<string, AttributeSpec> {
  if (!schema) return {};
  if (state.target === "kind") return schema.kinds.find((k) => k.name === state.name)?.attributes ?? {};
  return schema.traits.find((t) => t.name === state.name)?.attributes ?? {};
}

/** How a condition's value is picked and sent, from the Attribute's type. */
export function valueType(spec: AttributeSpec | undefined): ValueType {
  const type = spec?.type ?? "string";
  if (type === "enum") return "enum";
  if (type === "date") return "date";
  if (type === "integer") return "integer";
  if (type.startsWith("decimal")) return "decimal";
  if (type === "boolean") return "boolean";
  return "text";
}

const ORDERED: Operator[] = ["eq", "ne", "lt", "le", "gt", "ge", "in", "is_null"];

/** The operators that make sense for a type: comparisons for numbers and dates, text matching for
 * text, equality for an enum or a flag. */
export function operatorsFor(type: ValueType): Operator[] {
  switch (type) {
    case "integer":
    case "decimal":
    case "date":
      return ORDERED;
    case "enum":
      return ["eq", "ne", "in", "is_null"];
    case "boolean":
      return ["eq", "ne", "is_null"];
    default:
      return [...OPERATORS];
  }
}

/** The Attributes a query may name: those of the chosen Kind, or of the chosen Trait. */
import type { Schema } from "../api/types";
import type { QueryState } from "./queryModel";

export function queryAttributes(schema: Schema | undefined, state: Pick<QueryState, "target" | "name">): string[] {
  if (!schema) return [];
  if (state.target === "kind") return Object.keys(schema.kinds.find((k) => k.name === state.name)?.attributes ?? {});
  return Object.keys(schema.traits.find((t) => t.name === state.name)?.attributes ?? {});
}

/**
 * The schema as graph elements: one node per Kind (labelled with its Record count when known), one
 * edge per Relation between two Kinds the answer holds. Only what the schema answer lists is drawn:
 * a Kind the principal may not read is not in the answer, so it is not in the graph either.
 */
import type { Schema } from "../api/types";

export interface GraphNode {
  data: { id: string; label: string; records: number | null; traits: string };
}

export interface GraphEdge {
  data: { id: string; source: string; target: string; label: string };
}

export function kindLabel(name: string, records: number | null | undefined): string {
  return records === null || records === undefined ? name : `${name}\n${records.toLocaleString("en")} Records`;
}

export function schemaElements(schema: Schema, counts: Record<string, number>): Array<GraphNode | GraphEdge> {
  const kinds = new Set(schema.kinds.map((k) => k.name));
  const nodes: GraphNode[] = schema.kinds.map((kind) => ({
    data: {
      id: `kind:${kind.name}`,
      label: kindLabel(kind.name, counts[kind.name]),
      records: counts[kind.name] ?? null,
      traits: (kind.implements ?? []).join(", "),
    },
  }));
  const edges: GraphEdge[] = schema.relations
    .filter((r) => kinds.has(r.from) && kinds.has(r.to))
    .map((relation) => ({
      data: {
        id: `relation:${relation.name}`,
        source: `kind:${relation.from}`,
        target: `kind:${relation.to}`,
        label: relation.name,
      },
    }));
  return [...nodes, ...edges];
}

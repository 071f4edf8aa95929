/** The schema drawn with cytoscape: Kinds as nodes, Relations as labelled arrows. Clicking a Kind
 * opens its Records. The graph is small (a schema, not the data), so a force layout is instant. */
import cytoscape from "cytoscape";
import { useEffect, useRef } from "react";
import type { Schema } from "../api/types";
import { schemaElements } from "./schemaGraph";

interface Props {
  schema: Schema;
  counts: Record<string, number>;
  onKind: (kind: string) => void;
  onReady?: () => void;
}

const STYLE: cytoscape.StylesheetJson = [
  {
    selector: "node",
    style: {
      shape: "round-rectangle",
      "background-color": "#eef2ff",
      "border-color": "#4c6ef5",
      "border-width": 1.5,
      label: "data(label)",
      "text-wrap": "wrap",
      "text-valign": "center",
      "font-size": 14,
      color: "#1a1b1e",
      width: 150,
      height: 50,
    },
  },
  {
    selector: "edge",
    style: {
      width: 1.5,
      "line-color": "#868e96",
      "target-arrow-color": "#868e96",
      "target-arrow-shape": "triangle",
      "curve-style": "bezier",
      label: "data(label)",
      "font-size": 12,
      color: "#495057",
      "text-background-color": "#ffffff",
      "text-background-opacity": 0.85,
      "text-background-padding": "2px",
    },
  },
];

export function SchemaGraph({ schema, counts, onKind, onReady }: Props) {
  const container = useRef<HTMLDivElement>(null);
  const graph = useRef<cytoscape.Core | null>(null);
  const onKindRef = useRef(onKind);
  onKindRef.current = onKind;

  useEffect(() => {
    if (!container.current) return;
    const cy = cytoscape({
      container: container.current,
      style: STYLE,
      elements: [],
      minZoom: 0.3,
      maxZoom: 1.6,
    });
    cy.on("tap", "node", (event) => onKindRef.current(String(event.target.id()).replace(/^kind:/, "")));
    graph.current = cy;
    return () => {
      cy.destroy();
      graph.current = null;
    };
  }, []);

  // A new schema (another branch, a schema change) lays the graph out again; new counts relabel.
  const shape = JSON.stringify([schema.kinds.map((k) => k.name), schema.relations.map((r) => [r.name, r.from, r.to])]);
  useEffect(() => {
    const cy = graph.current;
    if (!cy) return;
    cy.elements().remove();
    cy.add(schemaElements(schema, counts));
    // A circle: deterministic (the same schema always looks the same) and never overlapping.
    cy.layout({ name: "circle", animate: false, padding: 24, avoidOverlap: true, spacingFactor: 0.9 }).run();
    cy.fit(undefined, 24);
    onReady?.();
    // Laid out again only when the shape changes (`shape`), not for new counts.
  }, [shape]);

  useEffect(() => {
    const cy = graph.current;
    if (!cy) return;
    for (const element of schemaElements(schema, counts)) {
      const node = cy.getElementById(element.data.id);
      if (node.nonempty() && "label" in element.data) node.data("label", element.data.label);
    }
  }, [schema, counts]);

  return (
    <div
      ref={container}
      data-testid="schema-graph"
      data-kinds={schema.kinds.map((k) => k.name).join(",")}
      role="img"
      aria-label={`Schema graph: ${schema.kinds.map((k) => k.name).join(", ")}`}
      style={{ width: "100%", height: 380, border: "1px solid var(--mantine-color-gray-3)", borderRadius: 8 }}
    />
  );
}

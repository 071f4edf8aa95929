/**
 * `/app/d/:domain/records/:kind/:key/neighbourhood`: a Record's neighbourhood on a canvas, read at the page's read
 * point (branch and `at`).
 *
 * The first read goes 1 or 2 Links deep (the depth picker); a click on a node, or its "Expand" button
 * in the list, reads one more Link around it and folds it in. Kinds and Relations can be left out of
 * the drawing; at most `CAP` Records are drawn, the rest counted ("N more"). The list beside the
 * canvas says the same as the canvas (for screen readers and the keyboard): each Record drawn, its
 * distance, a link to its page and its Expand button, and the Links drawn.
 */
import { Alert, Anchor, Button, Checkbox, Grid, Group, Paper, SegmentedControl, Stack, Table, Text, Title, VisuallyHidden } from "@mantine/core";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { Link, useParams } from "react-router";
import { ProblemAlert } from "../shell/ProblemAlert";
import { splitRef } from "../shell/format";
import { recordPath, useReadPoint } from "../shell/readPoint";
import { usePageTitle } from "../shell/title";
import { ReplayEngine } from "../replay/engine";
import { useCanvasPointer, type Hover } from "../replay/pointer";
import { readNeighborhood } from "../api/records";
import { addNeighborhood, emptyGraph, timelineOf, viewOf, type ExploreGraph, type GraphRecord } from "./graph";

/** Records drawn at most; the others are counted, not drawn. */
export const CAP = 150;

export function ExplorePage() {
  const { domain, branch, at } = useReadPoint();
  const { kind = "", key = "" } = useParams();
  const seed = `${kind}/${key}`;
  usePageTitle(`Neighbourhood of ${seed}`, domain);
  const [depth, setDepth] = useState("1");
  const [graph, setGraph] = useState<ExploreGraph>(() => emptyGraph(seed));
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(0);
  const [hiddenKinds, setHiddenKinds] = useState<Set<string>>(new Set());
  const [hiddenRelations, setHiddenRelations] = useState<Set<string>>(new Set());

  // Answers to reads made before the last reset (another Record, depth or read point) are dropped.
  const generation = useRef(0);
  const expand = useCallback(
    (ref: string, hops: number) => {
      const asked = generation.current;
      setLoading((n) => n + 1);
      readNeighborhood(domain, [ref], hops, { branch, at })
        .then((answer) => {
          if (asked !== generation.current) return;
          setGraph((current) => addNeighborhood(current, ref, answer));
          setError(null);
        })
        .catch(setError)
        .finally(() => setLoading((n) => n - 1));
    },
    [domain, branch, at, seed],
  );

  useEffect(() => {
    generation.current += 1;
    setGraph(emptyGraph(seed));
    expand(seed, Number(depth));
  }, [seed, depth, expand]);

  const view = useMemo(() => viewOf(graph, { hiddenKinds, hiddenRelations }, CAP), [graph, hiddenKinds, hiddenRelations]);
  const toggle = (set: Set<string>, name: string, update: (s: Set<string>) => void) => {
    const next = new Set(set);
    if (next.has(name)) next.delete(name);
    else next.add(name);
    update(next);
  };

  return (
    <Stack gap="sm" data-testid="explore-page">
      <Group justify="space-between" align="flex-end">
        <div>
          <Title order={2} size="h3">
            Neighbourhood of{" "}
            <Anchor component={Link} to={recordPath(domain, kind, key, { branch, at })} ff="monospace" inherit>
              {seed}
            </Anchor>
          </Title>
          <Text size="sm" c="dimmed" data-testid="explore-summary" aria-live="polite">
            {view.records.length} Records and {view.links.length} Links drawn
            {view.more > 0 ? ` · ${view.more} more not drawn` : ""}
            {loading > 0 ? " · reading…" : ""}
          </Text>
        </div>
        <Group gap="xs" align="flex-end">
          <Text size="sm" id="explore-depth-label">
            Depth
          </Text>
          <SegmentedControl
            size="xs"
            aria-labelledby="explore-depth-label"
            data={[
              { value: "1", label: "1 Link" },
              { value: "2", label: "2 Links" },
            ]}
            value={depth}
            onChange={setDepth}
            data-testid="explore-depth"
          />
        </Group>
      </Group>
      <ProblemAlert error={error} />
      {view.more > 0 && (
        <Alert color="blue" data-testid="explore-more">
          {view.more} more Records are in this neighbourhood but not drawn (at most {CAP} are): leave out a Kind or a
          Relation, or open one of the Records drawn.
        </Alert>
      )}
      {graph.capped && (
        <Text size="sm" c="dimmed" data-testid="explore-capped">
          The Domain's walk limits (read.traverse) cut a read: some Links are not shown.
        </Text>
      )}
      <Group gap="lg" align="flex-start">
        <Checkboxes
          legend="Kinds"
          names={view.kinds}
          hidden={hiddenKinds}
          onToggle={(name) => toggle(hiddenKinds, name, setHiddenKinds)}
          testId="explore-kinds"
        />
        <Checkboxes
          legend="Relations"
          names={view.relations}
          hidden={hiddenRelations}
          onToggle={(name) => toggle(hiddenRelations, name, setHiddenRelations)}
          testId="explore-relations"
        />
      </Group>
      <Grid>
        <Grid.Col span={{ base: 12, md: 7 }}>
          <GraphCanvas view={view} highlighted={graph.expanded} onExpand={(ref) => expand(ref, 1)} />
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 5 }}>
          <Paper withBorder p="sm" style={{ maxHeight: 560, overflow: "auto" }}>
            <RecordList
              domain={domain}
              records={view.records}
              expanded={graph.expanded}
              onExpand={(ref) => expand(ref, 1)}
              point={{ branch, at }}
            />
            <LinkList links={view.links} />
          </Paper>
        </Grid.Col>
      </Grid>
    </Stack>
  );
}

function Checkboxes(props: {
  legend: string;
  names: string[];
  hidden: ReadonlySet<string>;
  onToggle: (name: string) => void;
  testId: string;
}) {
  if (props.names.length === 0) return null;
  return (
    <fieldset data-testid={props.testId} style={{ border: 0, padding: 0, margin: 0 }}>
      <legend>
        <Text size="sm" fw={500}>
          {props.legend}
        </Text>
      </legend>
      <Group gap="sm" mt={4}>
        {props.names.map((name) => (
          <Checkbox
            key={name}
            size="xs"
            label={name}
            checked={!props.hidden.has(name)}
            onChange={() => props.onToggle(name)}
          />
        ))}
      </Group>
    </fieldset>
  );
}

/** A stable name for a drawing's layout (the layout cache keys on it). */
function shapeName(refs: string[], links: number): string {
  let hash = 0;
  for (const ref of refs) for (let i = 0; i < ref.length; i++) hash = (hash * 31 + ref.charCodeAt(i)) | 0;
  return `explore:${refs[0] ?? ""}:${refs.length}:${links}:${hash}`;
}

function GraphCanvas({
  view,
  highlighted,
  onExpand,
}: {
  view: ReturnType<typeof viewOf>;
  highlighted: string[];
  onExpand: (ref: string) => void;
}) {
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const engineRef = useRef<ReplayEngine | null>(null);
  const [hover, setHover] = useState<Hover | null>(null);
  const timeline = useMemo(
    () =>
      timelineOf(
        view,
        highlighted,
        shapeName(
          view.records.map((r) => r.ref),
          view.links.length,
        ),
      ),
    [view, highlighted],
  );

  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas || timeline.nodes.length === 0) return;
    // When the layout settles, the canvas names where each Record sits (CSS pixels, as fitted): the
    // browser test clicks a node there.
    const engine: ReplayEngine = new ReplayEngine(canvas, timeline, {
      step: 0,
      onLayout: (_ticks, done) => {
        if (!done) return;
        // Later: a cached layout reports while the engine is still being made.
        setTimeout(() => {
          if (engineRef.current !== engine) return;
          const at = timeline.nodes.map((ref, i) => {
            const p = engine.renderer.screenOf(i);
            return [ref, Math.round(p.x), Math.round(p.y)];
          });
          canvas.dataset.positions = JSON.stringify(at);
        }, 0);
      },
    });
    engineRef.current = engine;
    canvas.dataset.nodes = String(timeline.nodes.length);
    canvas.dataset.edges = String(timeline.edgeRelations.length);
    return () => {
      engine.destroy();
      engineRef.current = null;
    };
  }, [timeline]);

  const pick = useCallback(
    (node: number) => {
      const ref = engineRef.current?.timeline.nodes[node];
      if (ref) onExpand(ref);
    },
    [onExpand],
  );
  useCanvasPointer(canvasRef, engineRef, setHover, pick);
  const hovered = hover ? view.records[hover.node] : undefined;
  const kinds = useMemo(() => [...new Set(view.records.map((r) => r.kind))].sort(), [view]);

  return (
    <>
      <Paper withBorder style={{ position: "relative", height: 560, overflow: "hidden" }}>
        <canvas
          ref={canvasRef}
          data-testid="explore-canvas"
          role="img"
          aria-label={`A graph of ${view.records.length} Records and ${view.links.length} Links; the list beside it says the same`}
          style={{ width: "100%", height: "100%", display: "block", cursor: hover ? "pointer" : "grab" }}
        />
        {hovered && hover && (
          <Paper
            shadow="sm"
            withBorder
            p={6}
            data-testid="explore-tooltip"
            style={{ position: "absolute", left: hover.x + 12, top: hover.y + 12, maxWidth: 320, pointerEvents: "none" }}
          >
            <Text size="xs" ff="monospace">
              {hovered.ref}
            </Text>
            <Text size="xs">{hovered.title}</Text>
            <Text size="xs" c="dimmed">
              {hovered.depth} Link{hovered.depth === 1 ? "" : "s"} away · click to expand
            </Text>
          </Paper>
        )}
      </Paper>
      <Group gap="xs" mt={4}>
        {kinds.map((kind) => (
          <Group key={kind} gap={4}>
            <span style={{ width: 10, height: 10, borderRadius: 5, background: engineRef.current?.renderer.kindColour(kind) ?? "#999" }} />
            <Text size="xs">{kind}</Text>
          </Group>
        ))}
        <Text size="xs" c="dimmed">
          · ringed: the Record and those expanded · click a node to expand it · wheel to zoom, drag to pan,
          double-click to fit
        </Text>
      </Group>
    </>
  );
}

function RecordList(props: {
  domain: string;
  records: GraphRecord[];
  expanded: string[];
  onExpand: (ref: string) => void;
  point: { branch: string; at: string };
}) {
  return (
    <Table fz="sm" data-testid="explore-records" captionSide="top">
      <Table.Caption>Records drawn, nearest first</Table.Caption>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Record</Table.Th>
          <Table.Th>Links away</Table.Th>
          <Table.Th>
            <VisuallyHidden>Expand</VisuallyHidden>
          </Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {props.records.map((record) => {
          const ref = splitRef(record.ref);
          const expanded = props.expanded.includes(record.ref);
          return (
            <Table.Tr key={record.ref} data-ref={record.ref}>
              <Table.Td>
                <Anchor component={Link} to={recordPath(props.domain, ref?.kind ?? record.kind, ref?.key ?? record.key, props.point)} ff="monospace" size="sm">
                  {record.ref}
                </Anchor>
                <Text size="xs" c="dimmed">
                  {record.title}
                </Text>
              </Table.Td>
              <Table.Td>{record.depth}</Table.Td>
              <Table.Td>
                {expanded ? (
                  <Text size="xs" c="dimmed">
                    expanded
                  </Text>
                ) : (
                  <Button size="compact-xs" variant="default" onClick={() => props.onExpand(record.ref)} aria-label={`Expand ${record.ref}`}>
                    Expand
                  </Button>
                )}
              </Table.Td>
            </Table.Tr>
          );
        })}
      </Table.Tbody>
    </Table>
  );
}

function LinkList({ links }: { links: ReturnType<typeof viewOf>["links"] }) {
  if (links.length === 0) return null;
  return (
    <Table fz="xs" mt="sm" data-testid="explore-links" captionSide="top">
      <Table.Caption>Links drawn</Table.Caption>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Relation</Table.Th>
          <Table.Th>From</Table.Th>
          <Table.Th>To</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {links.map((link) => (
          <Table.Tr key={`${link.relation} ${link.from} ${link.to}`}>
            <Table.Td>{link.relation}</Table.Td>
            <Table.Td ff="monospace">{link.from}</Table.Td>
            <Table.Td ff="monospace">{link.to}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

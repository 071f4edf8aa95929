/**
 * `/app/sessions/:session`: an agent session replayed on a canvas, step by step.
 *
 * Controls: play/pause, step back/forward, a scrub slider and the speed. `?step=N` (1-based, as shown)
 * is a permalink: the page opens paused on that step and keeps the parameter up to date whenever the
 * replay stops on a step. When paused, the step's touched Records are read as of the step's Revision
 * (see asof.ts) for the side panel and the tooltips, and those that did not exist there are ringed;
 * then the graph around those present is read at that Revision and drawn over the session's
 * (revisionGraph.ts): Links not there are not drawn, Links and Records there that no step touched
 * are drawn light.
 */

import { ActionIcon, Anchor, Badge, Button, Grid, Group, NativeSelect, Paper, Slider, Stack, Text, Title } from "@mantine/core";
import { useEffect, useMemo, useRef, useState, type RefObject } from "react";
import { useCanvasPointer, type Hover } from "./pointer";
import { Link, useParams, useSearchParams } from "react-router";
import { ProblemAlert } from "../shell/ProblemAlert";
import { usePageTitle } from "../shell/title";
import { useApi } from "../shell/useApi";
import { fetchRecordAsOf, getSession } from "./api";
import { readNeighborhood } from "../api/records";
import type { Neighborhood } from "../api/types";
import { AsOfCache, readPointOf, type AsOf, type ReadPoint } from "./asof";
import { EMPTY_OVERLAY, revisionOverlay, type RevisionOverlay } from "./revisionGraph";
import { ReplayEngine } from "./engine";
import { SPEEDS, type PlayerState } from "./player";
import { AsOfLine, StepPanel } from "./StepPanel";
import { StepList } from "./StepList";
import { counted, failedSteps, formatBytes, formatDuration, markPositions, sessionTotals } from "./totals";
import { buildTimeline, clampStep, type Timeline } from "./timeline";

/** Records read as of a Revision, kept while the app is open (a Revision never changes). */
const asOfCache = new AsOfCache(fetchRecordAsOf, 6);
/** Records read per paused step (a step touches at most 200). */
const READ_PER_STEP = 100;

/** The graph one Link around some Records at a Revision, kept while the app is open (the last 100
 * asked: a Revision never changes). */
const graphsAt = new Map<string, Promise<Neighborhood>>();
function graphAt(point: ReadPoint, refs: string[]): Promise<Neighborhood> {
  const name = [point.domain, point.branch ?? "", point.revision, ...refs].join("\u0000");
  let answer = graphsAt.get(name);
  if (!answer) {
    answer = readNeighborhood(point.domain, refs, 1, { branch: point.branch ?? "", at: point.revision });
    answer.catch(() => graphsAt.delete(name));
    graphsAt.set(name, answer);
    if (graphsAt.size > 100) graphsAt.delete(graphsAt.keys().next().value!);
  }
  return answer;
}

export function ReplayPage() {
  const { session = "" } = useParams();
  const [params] = useSearchParams();
  const answer = useApi(() => getSession(session), [session]);
  const timeline = useMemo(() => (answer.data ? buildTimeline(answer.data) : null), [answer.data]);
  const initial = Number(params.get("step") ?? "1") - 1;
  usePageTitle(`Session ${session}`);
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Title order={1} size="h2">
          Session <Text span ff="monospace" inherit>{session}</Text>
        </Title>
        <Anchor component={Link} to="/sessions">
          All sessions
        </Anchor>
      </Group>
      <ProblemAlert error={answer.error} />
      {answer.loading && !timeline && <Text c="dimmed">Loading the session…</Text>}
      {timeline && <Replay key={session} timeline={timeline} initialStep={clampStep(timeline, initial)} />}
    </Stack>
  );
}

function Replay({ timeline, initialStep }: { timeline: Timeline; initialStep: number }) {
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const engineRef = useRef<ReplayEngine | null>(null);
  const [, setParams] = useSearchParams();
  const [player, setPlayer] = useState<PlayerState | null>(null);
  const [layout, setLayout] = useState({ ticks: 0, done: false });
  const [asOf, setAsOf] = useState<Map<string, AsOf>>(new Map());
  const [hover, setHover] = useState<Hover | null>(null);
  const [overlay, setOverlay] = useState<{ step: number; overlay: RevisionOverlay; problem?: string } | null>(null);
  const totals = useMemo(() => sessionTotals(timeline), [timeline]);
  const failedAt = useMemo(() => failedSteps(timeline), [timeline]);

  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas) return;
    const engine = new ReplayEngine(canvas, timeline, {
      step: initialStep,
      onChange: setPlayer,
      onLayout: (ticks, done) => setLayout({ ticks, done }),
    });
    engineRef.current = engine;
    setPlayer(engine.player);
    return () => {
      engine.destroy();
      engineRef.current = null;
    };
    // The engine lives as long as the timeline; the initial step only matters when it starts.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [timeline]);

  const step = player?.step ?? initialStep;
  const playing = player?.playing ?? false;

  // The permalink follows the step the replay stops on.
  useEffect(() => {
    if (playing || !player) return;
    setParams(
      (current) => {
        const next = new URLSearchParams(current);
        next.set("step", String(step + 1));
        return next;
      },
      { replace: true },
    );
  }, [step, playing, player, setParams]);

  // Paused on a step: read its Records as of its Revision, and ring the absent ones.
  useEffect(() => {
    const current = timeline.steps[step];
    const engine = engineRef.current;
    engine?.renderer.setOverlay(EMPTY_OVERLAY);
    setOverlay(null);
    if (playing || !current || !engine) return;
    const point = readPointOf(current);
    if (!point) {
      setAsOf(new Map());
      engine.renderer.setAbsent([]);
      return;
    }
    let live = true;
    const showRevisionGraph = (present: string[]) => {
      if (present.length === 0) return;
      graphAt(point, present)
        .then((answer) => {
          if (!live) return;
          const next = revisionOverlay(timeline, step, present, answer);
          engine.renderer.setOverlay(next);
          setOverlay({ step, overlay: next });
        })
        .catch((problem: unknown) => {
          if (!live) return;
          const detail = problem instanceof Error ? problem.message : String(problem);
          setOverlay({ step, overlay: EMPTY_OVERLAY, problem: detail });
        });
    };
    const timer = setTimeout(() => {
      void asOfCache.load(point, current.touched.slice(0, READ_PER_STEP)).then((answers) => {
        if (!live) return;
        setAsOf(answers);
        const absent: number[] = [];
        answers.forEach((answer, ref) => {
          const id = timeline.nodeIndex.get(ref);
          if (answer.state === "absent" && id !== undefined) absent.push(id);
        });
        engine.renderer.setAbsent(absent);
        const present = [...answers].filter(([, answer]) => answer.state === "present").map(([ref]) => ref);
        showRevisionGraph(present);
      });
    }, 150);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [timeline, step, playing]);

  // Hovering an earlier node while paused: read it as of the current step's Revision too.
  const hoverRef = hover ? timeline.nodes[hover.node] : undefined;
  useEffect(() => {
    const current = timeline.steps[step];
    if (playing || !hoverRef || !current) return;
    const point = readPointOf(current);
    if (!point || asOfCache.peek(point, hoverRef)) return;
    let live = true;
    void asOfCache.load(point, [hoverRef]).then((answers) => {
      if (!live) return;
      setAsOf((known) => new Map([...known, ...answers]));
    });
    return () => {
      live = false;
    };
  }, [timeline, step, playing, hoverRef]);

  useCanvasPointer(canvasRef, engineRef, setHover);
  useKeyboard(engineRef);

  const engine = engineRef.current;
  const currentStep = timeline.steps[step];
  const point = currentStep ? readPointOf(currentStep) : null;
  const hoverAsOf = hoverRef && point ? (asOf.get(hoverRef) ?? asOfCache.peek(point, hoverRef)) : undefined;
  const kinds = useMemo(() => [...new Set(timeline.nodeKinds)].sort(), [timeline]);

  return (
    <Stack gap="sm">
      <Group gap="xs" data-testid="session-totals">
        <Badge variant="light">{counted(totals.steps, "step")}</Badge>
        <Badge variant="light" color={totals.errors ? "red" : "gray"}>
          {counted(totals.errors, "error")}
        </Badge>
        <Badge variant="light" color="gray">
          {counted(totals.records, "Record")} · {counted(totals.links, "Link")} touched
        </Badge>
        <Badge variant="light" color={totals.writes ? "blue" : "gray"}>
          {counted(totals.writes, "write")} · {counted(totals.revisions, "Revision")} ·{" "}
          {counted(totals.changed, "Record")} changed
        </Badge>
        <Badge variant="light" color="gray">
          {formatDuration(totals.latencyMs)} in calls · {formatDuration(totals.spanMs)} elapsed
        </Badge>
        {totals.bytes > 0 && (
          <Badge variant="light" color="gray">
            {formatBytes(totals.bytes)} answered
          </Badge>
        )}
        {!layout.done && (
          <Badge variant="light" color="blue" data-testid="layout-progress">
            laying out… {layout.ticks} ticks
          </Badge>
        )}
      </Group>
      {totals.proposals.length > 0 && (
        <Group gap="xs" data-testid="session-proposals">
          <Text size="sm">Proposals this session opened:</Text>
          {totals.proposals.map((p) => (
            <Anchor key={p.id} component={Link} size="sm" to={`/d/${encodeURIComponent(p.domain)}/proposals/${encodeURIComponent(p.id)}`}>
              {p.id}
            </Anchor>
          ))}
        </Group>
      )}
      <Group gap="xs" wrap="nowrap" data-testid="replay-controls">
        <ActionIcon variant="default" aria-label="Step back" onClick={() => engine?.stepBy(-1)} disabled={step === 0}>
          ‹
        </ActionIcon>
        <Button
          size="xs"
          w={80}
          onClick={() => (playing ? engine?.pause() : engine?.play())}
          aria-label={playing ? "Pause" : "Play"}
        >
          {playing ? "Pause" : "Play"}
        </Button>
        <ActionIcon
          variant="default"
          aria-label="Step forward"
          onClick={() => engine?.stepBy(1)}
          disabled={step >= timeline.steps.length - 1}
        >
          ›
        </ActionIcon>
        <div style={{ flex: 1, position: "relative", paddingBottom: 10 }}>
          <Slider
            min={0}
            max={Math.max(0, timeline.steps.length - 1)}
            value={step}
            onChange={(value) => engine?.seek(value)}
            label={(value) => `step ${value + 1}`}
            aria-label="Scrub"
            thumbLabel="Scrub to a step"
          />
          <ErrorMarks steps={timeline.steps.length} failed={failedAt} onSeek={(s) => engine?.seek(s)} />
        </div>
        <Text size="sm" w={120} ta="right" data-testid="step-counter">
          {step + 1} / {timeline.steps.length}
        </Text>
        <NativeSelect
          w={120}
          size="xs"
          aria-label="Speed"
          data={SPEEDS.map((s) => ({ value: String(s), label: `${s} steps/s` }))}
          value={String(player?.speed ?? 2)}
          onChange={(event) => engine?.setSpeed(Number(event.currentTarget.value))}
        />
      </Group>
      {overlay && overlay.step === step && <RevisionGraphLine {...overlay} />}
      <Grid>
        <Grid.Col span={{ base: 12, lg: 3 }}>
          <Paper withBorder>
            <StepList timeline={timeline} step={step} onSelect={(s) => engine?.seek(s)} />
          </Paper>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 7, lg: 5 }}>
          <Paper withBorder style={{ position: "relative", height: 560, overflow: "hidden" }}>
            <canvas
              ref={canvasRef}
              data-testid="replay-canvas"
              style={{ width: "100%", height: "100%", display: "block", cursor: hover ? "pointer" : "grab" }}
            />
            {hover && hoverRef && (
              <Paper
                shadow="sm"
                withBorder
                p={6}
                data-testid="replay-tooltip"
                style={{ position: "absolute", left: hover.x + 12, top: hover.y + 12, maxWidth: 320, pointerEvents: "none" }}
              >
                <Text size="xs" ff="monospace">
                  {hoverRef}
                </Text>
                <Text size="xs" c="dimmed">
                  first touched at step {(timeline.nodeFirstStep[hover.node] ?? 0) + 1}
                </Text>
                <AsOfLine asOf={hoverAsOf} />
              </Paper>
            )}
          </Paper>
          <Group gap="xs" mt={4}>
            {kinds.map((kind) => (
              <Group key={kind} gap={4}>
                <span
                  style={{ width: 10, height: 10, borderRadius: 5, background: engine?.renderer.kindColour(kind) ?? "#999" }}
                />
                <Text size="xs">{kind}</Text>
              </Group>
            ))}
            <Text size="xs" c="dimmed">
              · current step ringed, earlier steps dimmed, red ring: did not exist at this step's Revision,
              blue: Links there no step touched (their Records hollow) ·
              wheel to zoom, drag to pan, double-click to fit · space plays, ← → step
            </Text>
          </Group>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 5, lg: 4 }}>
          <Paper withBorder p="sm">
            <StepPanel timeline={timeline} step={step} asOf={asOf} />
          </Paper>
        </Grid.Col>
      </Grid>
    </Stack>
  );
}

/** What the canvas shows of the graph at the step's Revision, in words. */
function RevisionGraphLine({ overlay, problem }: { overlay: RevisionOverlay; problem?: string }) {
  if (problem) {
    return (
      <Text size="sm" c="dimmed" data-testid="revision-graph">
        The graph at this step's Revision could not be read: {problem}
      </Text>
    );
  }
  return (
    <Text
      size="sm"
      data-testid="revision-graph"
      data-extra-nodes={overlay.extraNodes.length}
      data-missing-edges={overlay.missingEdges.length}
    >
      As of this step's Revision <Text span ff="monospace" inherit>{overlay.revision.slice(0, 12)}</Text>:{" "}
      {counted(overlay.links, "Link")} around its Records; {counted(overlay.extraEdges.length, "Link")} and{" "}
      {counted(overlay.extraNodes.length + overlay.more, "Record")} no step touched drawn in blue
      {overlay.more > 0 ? ` (${overlay.more} of those Records not drawn)` : ""};{" "}
      {counted(overlay.missingEdges.length, "Link")} drawn before not there (left out).
    </Text>
  );
}

/** The failed steps marked under the scrubber: a red tick each, a click goes to the step. */
function ErrorMarks({ steps, failed, onSeek }: { steps: number; failed: number[]; onSeek: (step: number) => void }) {
  const positions = markPositions(steps, failed);
  return (
    <div data-testid="scrubber-errors" aria-label="Failed steps" role="group" style={{ position: "absolute", left: 0, right: 0, bottom: 0, height: 8 }}>
      {failed.map((s, i) => (
        <button
          key={s}
          type="button"
          onClick={() => onSeek(s)}
          title={`step ${s + 1} failed`}
          aria-label={`Go to failed step ${s + 1}`}
          data-step={s}
          style={{
            position: "absolute",
            left: `calc(${(positions[i] ?? 0) * 100}% - 2px)`,
            width: 4,
            height: 8,
            padding: 0,
            border: 0,
            background: "var(--mantine-color-red-7)",
            cursor: "pointer",
          }}
        />
      ))}
    </div>
  );
}

/** Space plays or pauses, ← and → step, Home and End go to the first and last step. */
function useKeyboard(engineRef: RefObject<ReplayEngine | null>) {
  useEffect(() => {
    const key = (event: KeyboardEvent) => {
      const engine = engineRef.current;
      const target = event.target as HTMLElement | null;
      if (!engine || event.altKey || event.ctrlKey || event.metaKey) return;
      if (target?.closest("input, textarea, select, button, [role=slider], [contenteditable=true]")) return;
      const actions: Record<string, () => void> = {
        " ": () => (engine.player.playing ? engine.pause() : engine.play()),
        ArrowLeft: () => engine.stepBy(-1),
        ArrowRight: () => engine.stepBy(1),
        Home: () => engine.seek(0),
        End: () => engine.seek(engine.timeline.steps.length - 1),
      };
      const action = actions[event.key];
      if (action) {
        event.preventDefault();
        action();
      }
    };
    window.addEventListener("keydown", key);
    return () => window.removeEventListener("keydown", key);
  }, [engineRef]);
}

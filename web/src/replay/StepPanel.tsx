/**
 * The side panel of the replay: the current step's call, request, status, latency, counts, the notes
 * around it, and the Records and Links it touched as of the Revision it read.
 */

import { Anchor, Badge, Code, Group, List, Paper, ScrollArea, Stack, Text, Title } from "@mantine/core";
import { Link } from "react-router";
import type { AsOf } from "./asof";
import { statusColour } from "./StepList";
import { notesAround, splitRef, type Timeline } from "./timeline";
import { formatBytes } from "./totals";
import type { SessionNote } from "./types";

const LISTED = 30;

function shortRevision(revision?: string): string {
  return revision ? revision.slice(0, 12) : "none";
}

function valuesLine(values: Record<string, unknown>): string {
  return Object.entries(values)
    .slice(0, 4)
    .map(([name, value]) => `${name}=${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join("; ");
}

/** The app's page of a Record (`Kind/key`) of a Domain. */
export function recordPath(domain: string, ref: string): string {
  const { kind, key } = splitRef(ref);
  return `/d/${encodeURIComponent(domain)}/records/${encodeURIComponent(kind)}/${encodeURIComponent(key)}`;
}

function Notes({ notes, label }: { notes: SessionNote[]; label: string }) {
  if (notes.length === 0) return null;
  return (
    <Stack gap={4} data-testid="step-notes">
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      {notes.map((note) => (
        <Paper key={note.id} withBorder p={6} bg="yellow.0">
          <Text size="sm">{note.text}</Text>
          <Text size="xs" c="dimmed">
            {note.at}
          </Text>
        </Paper>
      ))}
    </Stack>
  );
}

export function AsOfLine({ asOf }: { asOf: AsOf | undefined }) {
  if (!asOf) return <Text span size="xs" c="dimmed">not read yet (pause to read)</Text>;
  if (asOf.state === "absent")
    return (
      <Text span size="xs" c="red" data-absent="true">
        did not exist at this Revision
      </Text>
    );
  if (asOf.state === "error")
    return (
      <Text span size="xs" c="orange">
        {asOf.detail}
      </Text>
    );
  return (
    <Text span size="xs">
      <b>{asOf.record.title}</b> {valuesLine(asOf.record.values)}
    </Text>
  );
}

export function StepPanel({ timeline, step, asOf }: { timeline: Timeline; step: number; asOf: Map<string, AsOf> }) {
  const current = timeline.steps[step];
  if (!current) return <Text c="dimmed">This session has no steps.</Text>;
  const notes = notesAround(timeline, step);
  const links = current.touched_links ?? [];
  const request = JSON.stringify(current.request, null, 2);
  return (
    <Stack gap="sm" data-testid="step-panel" data-step={step}>
      <Group justify="space-between">
        <Title order={2} size="h4">
          Step {step + 1} of {timeline.steps.length}
        </Title>
        <Badge color={statusColour(current.status)} data-testid="step-status">
          {current.status}
        </Badge>
      </Group>
      <Notes notes={notes.before} label="Notes before this step" />
      <Text size="sm">
        <b data-testid="step-call">{current.call}</b> by {current.principal}
        {current.domain ? ` on ${current.domain}` : ""}
      </Text>
      <Text size="xs" c="dimmed">
        {current.at} · {current.latency_ms.toFixed(1)} ms · Revision{" "}
        <span title={current.revision ?? ""}>{shortRevision(current.revision)}</span>
      </Text>
      {current.problem && (
        <Paper withBorder p={6} bg="red.0" data-testid="step-problem" role="note">
          <Text size="sm" fw={600}>
            {current.status} {current.problem.title} ({current.problem.code})
          </Text>
          <Text size="sm">{current.problem.detail}</Text>
        </Paper>
      )}
      <Text size="xs" c="dimmed">
        Answer{current.bytes !== undefined ? ` (${formatBytes(current.bytes)})` : ""}
      </Text>
      <Group gap={4} data-testid="step-answer">
        {Object.entries(current.counts).map(([name, count]) => (
          <Badge key={name} variant="light" color="gray">
            {name}: {count}
          </Badge>
        ))}
      </Group>
      <div>
        <Text size="xs" c="dimmed">
          Request
        </Text>
        <ScrollArea.Autosize mah={160}>
          <Code block>{request.length > 4000 ? `${request.slice(0, 4000)}\n…` : request}</Code>
        </ScrollArea.Autosize>
      </div>
      {(current.changed?.length || current.proposal) && (
        <div data-testid="step-writes">
          <Text size="xs" c="dimmed">
            Wrote {current.revisions?.length ?? 0} Revision{current.revisions?.length === 1 ? "" : "s"}
            {current.branch ? ` on ${current.branch}` : ""}
          </Text>
          {current.proposal && current.domain && (
            <Text size="sm">
              Opened Proposal{" "}
              <Anchor component={Link} to={`/d/${encodeURIComponent(current.domain)}/proposals/${encodeURIComponent(current.proposal)}`} data-testid="step-proposal">
                {current.proposal}
              </Anchor>
            </Text>
          )}
          <List size="sm" spacing={2} data-testid="step-changed">
            {(current.changed ?? []).slice(0, LISTED).map((change) => (
              <List.Item key={change.ref}>
                <Badge size="xs" variant="light" color={change.change === "deleted" ? "red" : change.change === "created" ? "green" : "blue"} mr={4}>
                  {change.change}
                </Badge>
                {current.domain ? (
                  <Anchor component={Link} to={recordPath(current.domain, change.ref)} size="sm" ff="monospace">
                    {change.ref}
                  </Anchor>
                ) : (
                  <Text span size="sm" ff="monospace">
                    {change.ref}
                  </Text>
                )}
              </List.Item>
            ))}
          </List>
        </div>
      )}
      <div>
        <Text size="xs" c="dimmed">
          Records touched ({current.touched.length}), as of Revision {shortRevision(current.revision)}
        </Text>
        <List size="sm" spacing={2} data-testid="step-records">
          {current.touched.slice(0, LISTED).map((ref) => (
            <List.Item key={ref}>
              <Text span size="sm" ff="monospace">
                {ref}
              </Text>{" "}
              <AsOfLine asOf={asOf.get(ref)} />
            </List.Item>
          ))}
        </List>
        {current.touched.length > LISTED && (
          <Text size="xs" c="dimmed">
            and {current.touched.length - LISTED} more
          </Text>
        )}
      </div>
      {links.length > 0 && (
        <div>
          <Text size="xs" c="dimmed">
            Links touched ({links.length})
          </Text>
          <List size="sm" spacing={2}>
            {links.slice(0, LISTED).map((link) => (
              <List.Item key={`${link.relation} ${link.from} ${link.to}`}>
                <Text span size="sm" ff="monospace">
                  {link.from} —{link.relation}→ {link.to}
                </Text>
              </List.Item>
            ))}
          </List>
        </div>
      )}
      <Notes notes={notes.after} label="Notes after this step" />
    </Stack>
  );
}

/**
 * The trace's step list beside the canvas: one row per step (its number, call, status, latency,
 * Records and Links touched, Records changed, answer size), the current one highlighted and kept in
 * view, failed steps marked; a click goes to the step.
 */

import { Badge, Group, ScrollArea, Text, UnstyledButton } from "@mantine/core";
import { useEffect, useRef } from "react";
import type { Timeline } from "./timeline";
import { failed, formatBytes, wrote } from "./totals";

export function statusColour(status: number): string {
  if (status >= 500) return "red";
  if (status >= 400) return "orange";
  return "green";
}

/** Rows drawn at most (a long session shows a window around the current step). */
const WINDOW = 200;

export function StepList({ timeline, step, onSelect }: { timeline: Timeline; step: number; onSelect: (step: number) => void }) {
  const current = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    current.current?.scrollIntoView({ block: "nearest" });
  }, [step]);
  const first = Math.max(0, Math.min(step - WINDOW / 2, timeline.steps.length - WINDOW));
  const shown = timeline.steps.slice(first, first + WINDOW);
  return (
    <ScrollArea h={560} type="auto" offsetScrollbars>
      <nav aria-label="Steps">
        <ol style={{ listStyle: "none", margin: 0, padding: 0 }} data-testid="step-list">
          {shown.map((s, i) => {
            const index = first + i;
            const active = index === step;
            const links = s.touched_links?.length ?? 0;
            return (
              <li key={s.id}>
                <UnstyledButton
                  ref={active ? current : undefined}
                  onClick={() => onSelect(index)}
                  aria-current={active ? "step" : undefined}
                  data-testid="step-row"
                  data-failed={failed(s) ? "true" : undefined}
                  data-step={index}
                  w="100%"
                  p={6}
                  style={{
                    borderLeft: `3px solid ${failed(s) ? "var(--mantine-color-red-6)" : active ? "var(--mantine-color-blue-6)" : "transparent"}`,
                    background: active ? "var(--mantine-color-blue-0)" : undefined,
                    borderBottom: "1px solid var(--mantine-color-gray-2)",
                  }}
                >
                  <Group gap={6} wrap="nowrap" justify="space-between">
                    <Text size="sm" fw={active ? 700 : 500} truncate>
                      {index + 1}. {s.call}
                    </Text>
                    <Badge size="sm" color={statusColour(s.status)} variant={failed(s) ? "filled" : "light"}>
                      {s.status}
                    </Badge>
                  </Group>
                  <Text size="xs" c="dimmed">
                    {s.latency_ms.toFixed(0)} ms · {s.touched.length} Records{links ? ` · ${links} Links` : ""}
                    {wrote(s) ? ` · wrote ${s.changed?.length ?? 0}` : ""}
                    {s.bytes !== undefined ? ` · ${formatBytes(s.bytes)}` : ""}
                  </Text>
                  {s.problem && (
                    <Text size="xs" c="red.8" truncate>
                      {s.problem.detail}
                    </Text>
                  )}
                </UnstyledButton>
              </li>
            );
          })}
        </ol>
      </nav>
    </ScrollArea>
  );
}

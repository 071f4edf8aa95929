/**
 * The lab's answers side by side: per configuration the resolve candidates, the search results with
 * scores and the context pack (its Records, tokens per section, what was trimmed, whether it is over
 * budget or capped). An item some other configuration misses is highlighted and says who misses it
 * (`data-missed-by` carries the labels, for the browser test too).
 */

import { Alert, Badge, Group, Paper, SimpleGrid, Stack, Table, Text, Title } from "@mantine/core";
import type { ReactNode } from "react";
import { sectionRows, type Compared, type Comparison, type Section } from "./compare";
import { labelOf, type LabConfig } from "./config";
import type { CallProblem, Candidate, LabRun, Outcome, PackRecord, SearchHit } from "./types";

const HIGHLIGHT = "var(--mantine-color-yellow-1)";

function Missed({ compared, labels }: { compared: Compared<unknown>; labels: string[] }) {
  if (compared.missedBy.length === 0) return null;
  const names = compared.missedBy.map((i) => labels[i]).join(", ");
  return (
    <Badge size="xs" color="yellow" variant="filled" title={`missed by ${names}`}>
      {names} miss{compared.missedBy.length === 1 ? "es" : ""}
    </Badge>
  );
}

function Row({ compared, labels, children }: { compared: Compared<unknown>; labels: string[]; children: ReactNode }) {
  const missed = compared.missedBy.map((i) => labels[i]).join(",");
  return (
    <Group
      gap={6}
      wrap="nowrap"
      justify="space-between"
      px={4}
      data-item={compared.id}
      data-missed-by={missed || undefined}
      style={{ background: missed ? HIGHLIGHT : undefined, borderRadius: 4 }}
    >
      <div style={{ minWidth: 0 }}>{children}</div>
      <Missed compared={compared} labels={labels} />
    </Group>
  );
}

function ProblemBox({ problem }: { problem: CallProblem }) {
  return (
    <Alert color="orange" p="xs" title={problem.title} role="alert">
      <Text size="xs">{problem.detail}</Text>
      <Text size="xs" c="dimmed">
        {problem.status}
      </Text>
    </Alert>
  );
}

function problemOf(outcome: Outcome<unknown> | undefined): CallProblem | null {
  return outcome && !outcome.ok ? outcome.problem : null;
}

function Columns<T>(props: {
  title: string;
  section: Section<T>;
  runs: (LabRun | null)[];
  labels: string[];
  call: "resolve" | "search" | "context";
  empty: string;
  render: (item: T) => ReactNode;
  extra?: (i: number) => ReactNode;
}) {
  const { title, section, runs, labels, call, empty, render, extra } = props;
  return (
    <Stack gap={4}>
      <Title order={4}>{title}</Title>
      <SimpleGrid cols={labels.length} spacing="sm">
        {labels.map((label, i) => {
          const problem = problemOf(runs[i]?.[call]);
          const list = section.lists[i];
          return (
            <Paper key={i} withBorder p="xs" data-testid={`lab-${call}-${i}`}>
              <Group justify="space-between" mb={4}>
                <Text fw={600} size="sm">
                  {label}
                </Text>
                {list && section.unique[i]! > 0 && (
                  <Badge size="xs" color="yellow">
                    {section.unique[i]} not found by all
                  </Badge>
                )}
              </Group>
              {extra?.(i)}
              {problem && <ProblemBox problem={problem} />}
              {!runs[i] && <Text size="xs" c="dimmed">not run</Text>}
              {list && list.length === 0 && (
                <Text size="xs" c="dimmed">
                  {empty}
                </Text>
              )}
              <Stack gap={2}>
                {list?.map((compared) => (
                  <Row key={compared.id} compared={compared} labels={labels}>
                    {render(compared.item)}
                  </Row>
                ))}
              </Stack>
            </Paper>
          );
        })}
      </SimpleGrid>
    </Stack>
  );
}

function CandidateLine({ candidate }: { candidate: Candidate }) {
  const target = candidate.attribute ? `${candidate.kind}.${candidate.attribute}` : candidate.kind;
  const values = candidate.values?.length ? ` = ${candidate.values.map(String).join(" | ")}` : "";
  return (
    <Text size="xs" ff="monospace" truncate>
      {candidate.target} {target}
      {values} · “{candidate.matched}” {candidate.level} {candidate.score.toFixed(2)}
      {candidate.records !== undefined ? ` · ${candidate.records} Records` : ""}
    </Text>
  );
}

function HitLine({ hit }: { hit: SearchHit }) {
  return (
    <Text size="xs" truncate>
      <Text span ff="monospace" size="xs">
        {hit.ref}
      </Text>{" "}
      {hit.title} · <b>{hit.score.toFixed(3)}</b>
    </Text>
  );
}

function PackLine({ record }: { record: PackRecord & { section: "seed" | "neighbor" } }) {
  return (
    <Text size="xs" truncate>
      <Text span ff="monospace" size="xs">
        {record.ref}
      </Text>{" "}
      {record.section === "seed" ? "seed" : `depth ${record.depth ?? 1}`} · {record.title}
    </Text>
  );
}

function BudgetSummary({ run }: { run: LabRun | null }) {
  if (!run || !run.context.ok) return null;
  const budget = run.context.value.budget;
  return (
    <Stack gap={2} mb={4} data-testid="lab-budget">
      <Text size="xs">
        {budget.used_tokens} of {budget.limit_tokens} tokens
      </Text>
      <Group gap={4}>
        {budget.over_budget && (
          <Badge size="xs" color="red">
            over budget
          </Badge>
        )}
        {budget.capped && (
          <Badge size="xs" color="orange">
            capped
          </Badge>
        )}
        {budget.trimmed.map((step) => (
          <Badge key={step} size="xs" variant="light" color="gray">
            trimmed {step}
            {budget.omitted[step] !== undefined ? ` (${budget.omitted[step]})` : ""}
          </Badge>
        ))}
      </Group>
    </Stack>
  );
}

function TokenTable({ runs, labels }: { runs: (LabRun | null)[]; labels: string[] }) {
  const budgets = runs.map((run) => (run && run.context.ok ? run.context.value.budget : null));
  const rows = sectionRows(budgets);
  if (rows.length === 0) return null;
  return (
    <Table withTableBorder data-testid="lab-tokens" maw={700}>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>tokens per section</Table.Th>
          {labels.map((label) => (
            <Table.Th key={label} ta="right">
              {label}
            </Table.Th>
          ))}
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((row) => {
          const known = row.tokens.filter((t): t is number => t !== null);
          const differs = new Set(known).size > 1 || known.length < labels.length;
          return (
            <Table.Tr key={row.section} style={{ background: differs ? HIGHLIGHT : undefined }}>
              <Table.Td>{row.section}</Table.Td>
              {row.tokens.map((tokens, i) => (
                <Table.Td key={i} ta="right">
                  {tokens ?? "–"}
                </Table.Td>
              ))}
            </Table.Tr>
          );
        })}
      </Table.Tbody>
    </Table>
  );
}

export function LabResults(props: { configs: LabConfig[]; runs: (LabRun | null)[]; comparison: Comparison }) {
  const { configs, runs, comparison } = props;
  const labels = configs.map(labelOf);
  return (
    <Stack gap="md" data-testid="lab-results">
      <Columns
        title="Resolve candidates"
        call="resolve"
        section={comparison.candidates}
        runs={runs}
        labels={labels}
        empty="no candidates"
        render={(candidate) => <CandidateLine candidate={candidate} />}
        extra={(i) => {
          const run = runs[i];
          const unmatched = run && run.resolve.ok ? run.resolve.value.unmatched : [];
          return unmatched.length ? (
            <Text size="xs" c="dimmed">
              unmatched: {unmatched.join(", ")}
            </Text>
          ) : null;
        }}
      />
      <Columns
        title="Search results"
        call="search"
        section={comparison.search}
        runs={runs}
        labels={labels}
        empty="no results"
        render={(hit) => <HitLine hit={hit} />}
      />
      <Columns
        title="Context pack"
        call="context"
        section={comparison.pack}
        runs={runs}
        labels={labels}
        empty="an empty pack"
        render={(record) => <PackLine record={record} />}
        extra={(i) => <BudgetSummary run={runs[i] ?? null} />}
      />
      <TokenTable runs={runs} labels={labels} />
    </Stack>
  );
}

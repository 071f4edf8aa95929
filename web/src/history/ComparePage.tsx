/**
 * `/d/:domain/compare?base=&head=`: how far a branch (head) is ahead of and behind another (base),
 * the Revisions each has that the other has not (read back from both heads with
 * `GET .../revisions/{revision}` until they meet: compare.ts), and what the head changed since they
 * last met (`GET .../diff` on the head, from the newest shared Revision to its newest), with its
 * schema changes and their preview on the base when one of its Revisions changed the schema.
 */
import { Anchor, Badge, Grid, Group, Paper, Select, Stack, Table, Text, Title } from "@mantine/core";
import { Link, useSearchParams } from "react-router";
import { getRevision, listBranches } from "../api/domain";
import { getDiff } from "../api/records";
import type { RevisionDoc } from "../api/types";
import { DiffView } from "../diff/DiffView";
import { SchemaChangesPanel } from "../diff/SchemaChangesPanel";
import { useDomain } from "../shell/DomainLayout";
import { ProblemAlert } from "../shell/ProblemAlert";
import { formatTime, shortRevision } from "../shell/format";
import { useReadPoint } from "../shell/readPoint";
import { usePageTitle } from "../shell/title";
import { useApi } from "../shell/useApi";
import { compareBranches } from "./compare";
import { revisionPath } from "./RevisionPage";

async function compare(domain: string, base: string, head: string) {
  const { branches } = await listBranches(domain); // their heads now (the layout's list may be older)
  const headOf = (name: string) => branches.find((b) => b.name === name)?.head ?? null;
  const result = await compareBranches(headOf(base), headOf(head), async (side, revision) => {
    const view = await getRevision(domain, side === "base" ? base : head, revision, 1);
    return view.revision;
  });
  const diff = result.mergeBase && result.head && result.ahead.length > 0 ? await getDiff(domain, head, result.mergeBase, result.head) : null;
  return { ...result, diff };
}

function Revisions({ domain, branch, events, testId }: { domain: string; branch: string; events: RevisionDoc[]; testId: string }) {
  if (events.length === 0) return <Text size="sm" c="dimmed">None.</Text>;
  return (
    <Table fz="sm" data-testid={testId}>
      <Table.Tbody>
        {events.map((e) => (
          <Table.Tr key={e.id}>
            <Table.Td ff="monospace">
              <Anchor component={Link} to={revisionPath(domain, branch, e.id)} size="sm">
                {shortRevision(e.id)}
              </Anchor>
            </Table.Td>
            <Table.Td>{e.message}</Table.Td>
            <Table.Td>{e.author}</Table.Td>
            <Table.Td>{formatTime(e.created_at)}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

export function ComparePage() {
  const { domain } = useReadPoint();
  const { branches, defaultBranch } = useDomain();
  const [params, setParams] = useSearchParams();
  const base = params.get("base") || defaultBranch;
  const head = params.get("head") ?? "";
  usePageTitle("Compare branches", domain);
  const names = branches.map((b) => b.name);
  const result = useApi(base && head && base !== head ? () => compare(domain, base, head) : null, [domain, base, head]);
  const pick = (name: "base" | "head", value: string | null) =>
    setParams((current) => {
      const next = new URLSearchParams(current);
      if (value) next.set(name, value);
      else next.delete(name);
      return next;
    });
  const r = result.data;
  return (
    <Stack gap="md" data-testid="compare-page">
      <Title order={2} size="h3">
        Compare branches
      </Title>
      <Group align="flex-end">
        <Select label="Base" data={names} value={base || null} onChange={(v) => pick("base", v)} searchable w={260} data-testid="compare-base" />
        <Text pb={6}>←</Text>
        <Select label="Head" data={names.filter((n) => n !== base)} value={head || null} onChange={(v) => pick("head", v)} searchable w={260} placeholder="a branch to compare" data-testid="compare-head" />
      </Group>
      {!head && <Text c="dimmed">Pick a branch to compare with {base || "the default branch"}.</Text>}
      <ProblemAlert error={result.error} title="The branches cannot be compared" />
      {result.loading && <Text c="dimmed">Reading both histories…</Text>}
      {r && (
        <>
          <Group gap="xs" data-testid="compare-counts">
            <Badge size="lg" color={r.ahead.length ? "blue" : "gray"}>
              {r.truncated ? "at least " : ""}
              {r.ahead.length} ahead
            </Badge>
            <Badge size="lg" color={r.behind.length ? "orange" : "gray"}>
              {r.truncated ? "at least " : ""}
              {r.behind.length} behind
            </Badge>
            <Text size="sm" c="dimmed">
              {head} has {r.ahead.length} Revision{r.ahead.length === 1 ? "" : "s"} {base} has not, and lacks {r.behind.length} of {base}'s; they last met at{" "}
              <Text span ff="monospace" size="sm">
                {shortRevision(r.mergeBase) || "no shared Revision"}
              </Text>
              .
            </Text>
          </Group>
          <Grid>
            <Grid.Col span={{ base: 12, md: 6 }}>
              <Paper withBorder p="sm">
                <Title order={2} size="h5" mb="xs">
                  Ahead: only on {head}
                </Title>
                <Revisions domain={domain} branch={head} events={r.ahead} testId="compare-ahead" />
              </Paper>
            </Grid.Col>
            <Grid.Col span={{ base: 12, md: 6 }}>
              <Paper withBorder p="sm">
                <Title order={2} size="h5" mb="xs">
                  Behind: only on {base}
                </Title>
                <Revisions domain={domain} branch={base} events={r.behind} testId="compare-behind" />
              </Paper>
            </Grid.Col>
          </Grid>
          {r.mergeBase && r.head && r.ahead.some((e) => e.schema_changed) && (
            <SchemaChangesPanel domain={domain} range={{ branch: head, from: r.mergeBase, to: r.head }} target={base} />
          )}
          {r.diff && (
            <Paper withBorder p="sm">
              <Title order={2} size="h5" mb="xs">
                What {head} changed since {shortRevision(r.mergeBase)}
              </Title>
              <DiffView domain={domain} diff={r.diff} />
            </Paper>
          )}
        </>
      )}
    </Stack>
  );
}

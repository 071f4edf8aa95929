/**
 * The data-health report: the summary, then per Kind its Records, invalid values by rule (with
 * example keys), duplicate groups, and per Relation its Links, orphans and required gaps. Every
 * example key links to its Record page at the same read point.
 */
import { Anchor, Badge, Group, List, Paper, Stack, Table, Text, Title } from "@mantine/core";
import { Link } from "react-router";
import { getHealth } from "../api/domain";
import type { KindHealth, RelationHealth } from "../api/types";
import { ProblemAlert } from "../shell/ProblemAlert";
import { shortRevision } from "../shell/format";
import { recordPath, useReadPoint, type ReadPoint } from "../shell/readPoint";
import { useApi } from "../shell/useApi";
import { HealthSummaryCard } from "./HealthSummaryCard";
import { keyRef, orphanRefs, type ExampleRef } from "./examples";
import { usePageTitle } from "../shell/title";

function Examples({ domain, point, refs }: { domain: string; point: ReadPoint; refs: ExampleRef[] }) {
  return (
    <>
      {refs.map((ref, i) => (
        <span key={`${ref.kind}/${ref.key}/${i}`}>
          {i > 0 && ", "}
          <Anchor component={Link} to={recordPath(domain, ref.kind, ref.key, point)} size="sm" ff="monospace" data-testid="health-example">
            {ref.key}
          </Anchor>
        </span>
      ))}
    </>
  );
}

function KindSection({ domain, point, kind }: { domain: string; point: ReadPoint; kind: KindHealth }) {
  if (kind.violations.length === 0 && kind.duplicates.length === 0) return null;
  return (
    <Paper withBorder p="sm">
      <Title order={5}>
        {kind.kind}{" "}
        <Text span size="sm" c="dimmed">
          ({kind.checked} of {kind.records} Records checked{kind.sampled ? ", sampled" : ""})
        </Text>
      </Title>
      <List size="sm" mt={4}>
        {kind.violations.map((v) => (
          <List.Item key={`${v.rule}:${v.attribute}`}>
            <code>{v.rule}</code> on <code>{v.attribute}</code>: {v.records} Records (e.g.{" "}
            <Examples domain={domain} point={point} refs={v.examples.map((k) => keyRef(kind.kind, k))} />)
          </List.Item>
        ))}
        {kind.duplicates.map((d, i) => (
          <List.Item key={`dup:${i}`}>
            duplicates on <code>{d.attribute}</code> [{d.reason}]: <Examples domain={domain} point={point} refs={d.keys.map((k) => keyRef(kind.kind, k))} /> ({d.records})
          </List.Item>
        ))}
      </List>
    </Paper>
  );
}

function RelationRow({ domain, point, relation }: { domain: string; point: ReadPoint; relation: RelationHealth }) {
  return (
    <Table.Tr>
      <Table.Td>{relation.relation}</Table.Td>
      <Table.Td>
        {relation.from} → {relation.to}
      </Table.Td>
      <Table.Td ta="right">{relation.links}</Table.Td>
      <Table.Td>
        <Text size="sm" c={relation.orphans ? "red" : undefined}>
          {relation.orphans}
        </Text>
        {relation.orphan_examples.map((e) => (
          <div key={e}>
            <Examples domain={domain} point={point} refs={orphanRefs(e, relation.from, relation.to)} />
          </div>
        ))}
      </Table.Td>
      <Table.Td>
        {relation.required_from ? (
          <>
            <Text size="sm" c={relation.gaps ? "red" : undefined}>
              {relation.gaps ?? 0}
            </Text>
            <Examples domain={domain} point={point} refs={(relation.gap_examples ?? []).map((k) => keyRef(relation.from, k))} />
          </>
        ) : (
          <Text size="sm" c="dimmed">
            not required
          </Text>
        )}
      </Table.Td>
    </Table.Tr>
  );
}

export function HealthPage() {
  const { domain, branch, at } = useReadPoint();
  usePageTitle("Health", domain);
  const point = { branch, at };
  const health = useApi(() => getHealth(domain, point), [domain, branch, at]);
  const data = health.data;
  return (
    <Stack gap="md" data-testid="health-page">
      <ProblemAlert error={health.error} />
      {data && (
        <>
          <Paper withBorder p="md">
            <Group justify="space-between" mb="xs">
              <Title order={4}>Summary</Title>
              <Text size="xs" c="dimmed">
                {data.branch} at {shortRevision(data.revision)}
              </Text>
            </Group>
            <HealthSummaryCard health={data} />
          </Paper>
          <Paper withBorder p="md">
            <Title order={4} mb="xs">
              Kinds
            </Title>
            <Table striped withTableBorder data-testid="health-kinds">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Kind</Table.Th>
                  <Table.Th ta="right">Records</Table.Th>
                  <Table.Th ta="right">Invalid</Table.Th>
                  <Table.Th ta="right">Duplicate groups</Table.Th>
                  <Table.Th ta="right">Stale derived</Table.Th>
                  <Table.Th>Last change</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {data.kinds.map((k) => (
                  <Table.Tr key={k.kind}>
                    <Table.Td>{k.kind}</Table.Td>
                    <Table.Td ta="right">{k.records}</Table.Td>
                    <Table.Td ta="right">{k.invalid ? <Badge color="red">{k.invalid}</Badge> : 0}</Table.Td>
                    <Table.Td ta="right">{k.duplicate_groups ? <Badge color="orange">{k.duplicate_groups}</Badge> : 0}</Table.Td>
                    <Table.Td ta="right">{k.derived ?? ""}</Table.Td>
                    <Table.Td ff="monospace">{shortRevision(k.last_change)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Paper>
          {data.kinds.map((k) => (
            <KindSection key={k.kind} domain={domain} point={point} kind={k} />
          ))}
          <Paper withBorder p="md">
            <Title order={4} mb="xs">
              Relations
            </Title>
            <Table striped withTableBorder data-testid="health-relations">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Relation</Table.Th>
                  <Table.Th>Ends</Table.Th>
                  <Table.Th ta="right">Links</Table.Th>
                  <Table.Th>Orphans</Table.Th>
                  <Table.Th>Required gaps</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {data.relations.map((r) => (
                  <RelationRow key={r.relation} domain={domain} point={point} relation={r} />
                ))}
              </Table.Tbody>
            </Table>
          </Paper>
        </>
      )}
    </Stack>
  );
}

/**
 * A Domain at a glance: the schema as a graph (Kinds with their Record counts, Relations; Traits and
 * lenses listed), the health summary, the branches and the latest Revisions. It stays current
 * without a reload: each Revision the event stream announces is put in front of the list and the
 * counts and health are read again.
 */
import { Anchor, Badge, Grid, Group, List, Paper, SimpleGrid, Stack, Table, Text, Title, Tooltip } from "@mantine/core";
import { useCallback, useEffect, useRef, useState } from "react";
import { Link, useNavigate } from "react-router";
import { getHealth, getSchema } from "../api/domain";
import { events } from "../api/events";
import type { RevisionEvent } from "../api/types";
import { useDomain } from "../shell/DomainLayout";
import { ProblemAlert } from "../shell/ProblemAlert";
import { revisionPath } from "../history/RevisionPage";
import { formatTime, shortRevision } from "../shell/format";
import { domainPath, useReadPoint } from "../shell/readPoint";
import { useApi } from "../shell/useApi";
import { HealthSummaryCard } from "../health/HealthSummaryCard";
import { SchemaGraph } from "./SchemaGraph";
import { asRevisionEvent, latestRevisions, withEvent } from "./latestRevisions";
import { usePageTitle } from "../shell/title";

type Live = "connecting" | "live" | "off";

export function OverviewPage() {
  const { domain, branch, at } = useReadPoint();
  usePageTitle("Overview", domain);
  const { branches, branchName, reloadBranches } = useDomain();
  const navigate = useNavigate();
  const point = { branch, at };

  const schema = useApi(() => getSchema(domain, branch), [domain, branch]);
  const health = useApi(() => getHealth(domain, point), [domain, branch, at]);
  const revisions = useApi<RevisionEvent[]>(
    branchName ? () => latestRevisions(domain, branchName) : null,
    [domain, branchName],
  );
  const [live, setLive] = useState<Live>("connecting");
  const [graphReady, setGraphReady] = useState(false);

  // Reads to repeat after a Revision arrives, at most once per burst of events.
  const refresh = useRef<number | undefined>(undefined);
  const afterRevision = useCallback(
    (event: RevisionEvent) => {
      window.clearTimeout(refresh.current);
      refresh.current = window.setTimeout(() => {
        if (!at) health.reload();
        if ((event as { schema_changed?: boolean }).schema_changed) schema.reload();
        reloadBranches();
      }, 300);
    },
    [at, health, schema, reloadBranches],
  );

  useEffect(() => {
    if (!branchName) return;
    setLive("connecting");
    const close = events(
      domain,
      branchName,
      (message) => {
        const event = asRevisionEvent(message.data);
        if (!event) return;
        revisions.setData((list) => withEvent(list ?? [], event));
        afterRevision(event);
      },
      { onOpen: () => setLive("live"), onError: () => setLive("off") },
    );
    return () => {
      close();
      window.clearTimeout(refresh.current);
    };
    // The dependencies are listed on purpose (the callbacks change identity every render).
  }, [domain, branchName]);

  useEffect(() => {
    if (graphReady && schema.data && health.data) {
      performance.mark("lorebase:overview-ready");
    }
  }, [graphReady, schema.data, health.data]);

  const counts = Object.fromEntries((health.data?.kinds ?? []).map((k) => [k.kind, k.records]));
  const ready = graphReady && Boolean(schema.data) && Boolean(health.data);

  return (
    <Stack gap="md" data-testid="overview" data-ready={ready ? "true" : "false"}>
      {schema.data?.description && <Text c="dimmed">{schema.data.description}</Text>}
      <Grid gap="md">
        <Grid.Col span={{ base: 12, lg: 7 }}>
          <Paper withBorder p="md">
            <Title order={4} mb="xs">
              Schema
            </Title>
            <ProblemAlert error={schema.error} />
            {schema.data && (
              <SchemaGraph
                schema={schema.data}
                counts={counts}
                onKind={(kind) => navigate(domainPath(domain, "records", point, { kind }))}
                onReady={() => setGraphReady(true)}
              />
            )}
            {schema.data && (
              <SimpleGrid cols={2} mt="md">
                <div>
                  <Text fw={600} size="sm">
                    Traits
                  </Text>
                  <List size="sm" data-testid="traits">
                    {schema.data.traits.map((t) => (
                      <List.Item key={t.name}>
                        <b>{t.name}</b> ({t.kinds.join(", ") || "no Kind you may read"})
                        {t.description && <Text size="xs" c="dimmed">{t.description}</Text>}
                      </List.Item>
                    ))}
                    {schema.data.traits.length === 0 && <Text size="sm" c="dimmed">none</Text>}
                  </List>
                </div>
                <div>
                  <Text fw={600} size="sm">
                    Lenses
                  </Text>
                  <List size="sm" data-testid="lenses">
                    {schema.data.lenses.map((l) => (
                      <List.Item key={l.name}>
                        <b>{l.name}</b>: {l.kinds.join(", ")}
                        {l.description && <Text size="xs" c="dimmed">{l.description}</Text>}
                      </List.Item>
                    ))}
                    {schema.data.lenses.length === 0 && <Text size="sm" c="dimmed">none</Text>}
                  </List>
                </div>
              </SimpleGrid>
            )}
          </Paper>
        </Grid.Col>
        <Grid.Col span={{ base: 12, lg: 5 }}>
          <Stack gap="md">
            <Paper withBorder p="md">
              <Group justify="space-between" mb="xs">
                <Title order={4}>Health</Title>
                <Anchor component={Link} to={domainPath(domain, "health", point)} size="sm">
                  Full report
                </Anchor>
              </Group>
              <ProblemAlert error={health.error} />
              {health.data && <HealthSummaryCard health={health.data} />}
              {health.data && (
                <Table mt="sm" striped withTableBorder data-testid="kind-counts">
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>Kind</Table.Th>
                      <Table.Th ta="right">Records</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {health.data.kinds.map((k) => (
                      <Table.Tr key={k.kind}>
                        <Table.Td>
                          <Anchor component={Link} to={domainPath(domain, "records", point, { kind: k.kind })}>
                            {k.kind}
                          </Anchor>
                        </Table.Td>
                        <Table.Td ta="right">{k.records.toLocaleString("en")}</Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              )}
            </Paper>
            <Paper withBorder p="md">
              <Title order={4} mb="xs">
                Branches
              </Title>
              <Table withTableBorder data-testid="branches">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Branch</Table.Th>
                    <Table.Th>Head</Table.Th>
                    <Table.Th>From</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {branches.map((b) => (
                    <Table.Tr key={b.name}>
                      <Table.Td>
                        <Anchor component={Link} to={domainPath(domain, "", { branch: b.default ? "" : b.name, at: "" })}>
                          {b.name}
                        </Anchor>{" "}
                        {b.default && <Badge size="xs">default</Badge>}{" "}
                        {b.protected && <Badge size="xs" color="gray">protected</Badge>}
                      </Table.Td>
                      <Table.Td ff="monospace">{shortRevision(b.head)}</Table.Td>
                      <Table.Td>{b.from || "—"}</Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Paper>
          </Stack>
        </Grid.Col>
      </Grid>
      <Paper withBorder p="md">
        <Group justify="space-between" mb="xs">
          <Title order={4}>Latest Revisions on {branchName || "the default branch"}</Title>
          <Tooltip label="New Revisions appear here as they are committed (the event stream)">
            <Badge color={live === "live" ? "green" : live === "off" ? "gray" : "yellow"} data-testid="live-state">
              {live === "live" ? "live" : live === "off" ? "not live" : "connecting"}
            </Badge>
          </Tooltip>
        </Group>
        <ProblemAlert error={revisions.error} title="The Revisions cannot be listed" />
        {revisions.data && <RevisionTable revisions={revisions.data} domain={domain} branch={branchName} />}
      </Paper>
    </Stack>
  );
}

function RevisionTable({ revisions, domain, branch }: { revisions: RevisionEvent[]; domain: string; branch: string }) {
  if (revisions.length === 0) return <Text c="dimmed">No Revisions yet.</Text>;
  return (
    <Table striped data-testid="revisions">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Revision</Table.Th>
          <Table.Th>When</Table.Th>
          <Table.Th>Who</Table.Th>
          <Table.Th>Origin</Table.Th>
          <Table.Th>Message</Table.Th>
          <Table.Th>Changed</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {revisions.map((r) => (
          <Table.Tr key={r.revision} data-revision={r.revision}>
            <Table.Td ff="monospace">
              <Anchor component={Link} to={domainPath(domain, "", { branch: r.branch, at: r.revision })}>
                {shortRevision(r.revision)}
              </Anchor>
            </Table.Td>
            <Table.Td>{formatTime(r.created_at)}</Table.Td>
            <Table.Td>{r.author}</Table.Td>
            <Table.Td>{r.origin.type}</Table.Td>
            <Table.Td>
              <Anchor component={Link} to={revisionPath(domain, branch, r.revision)} size="sm" data-testid="revision-link">
                {r.message || "(no message)"}
              </Anchor>
            </Table.Td>
            <Table.Td>
              {Object.entries(r.kinds)
                .map(([kind, n]) => `${kind} ${n}`)
                .join(", ")}
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/**
 * `/d/:domain/revisions/:revision?branch=`: what one Revision changed, who made it, why (its message)
 * and where it came from (its origin), with its parents: `GET .../revisions/{revision}` on the
 * page's branch (the Revision, the Records and Links it changed, what it changed in the schema), and
 * the values before and after with `GET .../diff?from=<first parent>&to=<revision>`; a schema change
 * element by element (the schema at the parent against the Revision's, with its change set).
 */
import { Anchor, Badge, Group, List, Paper, Stack, Table, Text, Title } from "@mantine/core";
import { Link, useParams } from "react-router";
import { getRevision } from "../api/domain";
import { getDiff } from "../api/records";
import type { DiffResult, RevisionView } from "../api/types";
import { DiffView } from "../diff/DiffView";
import { SchemaChangesPanel } from "../diff/SchemaChangesPanel";
import { useDomain } from "../shell/DomainLayout";
import { ProblemAlert } from "../shell/ProblemAlert";
import { formatTime, shortRevision } from "../shell/format";
import { domainPath, useReadPoint } from "../shell/readPoint";
import { usePageTitle } from "../shell/title";
import { useApi } from "../shell/useApi";

/** The path of a Revision's page on a branch. */
export function revisionPath(domain: string, branch: string, revision: string): string {
  return domainPath(domain, `revisions/${encodeURIComponent(revision)}`, { branch, at: "" });
}

/** How many Records per Kind and Links per Relation a page of changes holds. */
function changedCounts(view: RevisionView): Array<{ entity: string; name: string; count: number }> {
  const counts = new Map<string, { entity: string; name: string; count: number }>();
  for (const change of view.changes) {
    const id = `${change.entity}\u0000${change.name}`;
    const known = counts.get(id);
    if (known) known.count += 1;
    else counts.set(id, { entity: change.entity, name: change.name, count: 1 });
  }
  return [...counts.values()].sort((a, b) => a.entity.localeCompare(b.entity) || a.name.localeCompare(b.name));
}

function originText(origin: Record<string, unknown>): string {
  const type = typeof origin.type === "string" ? origin.type : "";
  const ref = typeof origin.ref === "string" ? origin.ref : "";
  return ref ? `${type} · ${ref}` : type;
}

export function RevisionPage() {
  const { domain } = useReadPoint();
  const { revision = "" } = useParams();
  const { branchName } = useDomain();
  usePageTitle(`Revision ${shortRevision(revision)}`, domain);
  const found = useApi(branchName ? () => getRevision(domain, branchName, revision) : null, [domain, branchName, revision]);
  const view = found.data;
  const event = view?.revision;
  const diff = useApi<DiffResult | null>(
    event ? () => (event.parents[0] ? getDiff(domain, branchName, event.parents[0], event.id) : Promise.resolve(null)) : null,
    [event?.id, branchName],
  );
  return (
    <Stack gap="md" data-testid="revision-page">
      <Title order={2} size="h3">
        Revision{" "}
        <Text span ff="monospace" inherit>
          {shortRevision(event?.id ?? revision)}
        </Text>
      </Title>
      <ProblemAlert error={found.error} title="The Revision cannot be read" />
      {view && event && (
        <Paper withBorder p="md" data-testid="revision-summary">
          <Text fw={600} data-testid="revision-message">
            {event.message || "(no message)"}
          </Text>
          <Table mt="xs" fz="sm" withRowBorders={false} data-testid="revision-facts">
            <Table.Tbody>
              <Table.Tr>
                <Table.Th w={120}>Who</Table.Th>
                <Table.Td>{event.author}</Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>When</Table.Th>
                <Table.Td>{formatTime(event.created_at)}</Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>Origin</Table.Th>
                <Table.Td>{originText(event.origin)}</Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>Branch</Table.Th>
                <Table.Td>
                  {event.branch} (generation {event.generation})
                </Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>Parents</Table.Th>
                <Table.Td>
                  <Group gap="xs">
                    {event.parents.length === 0 && "none (the first Revision)"}
                    {event.parents.map((p) => (
                      <Anchor key={p} component={Link} to={revisionPath(domain, branchName, p)} ff="monospace" size="sm">
                        {shortRevision(p)}
                      </Anchor>
                    ))}
                  </Group>
                </Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>Changed</Table.Th>
                <Table.Td>
                  <Group gap={4}>
                    {changedCounts(view).map((c) => (
                      <Badge key={`${c.entity} ${c.name}`} variant="light" color={c.entity === "record" ? "blue" : "gray"}>
                        {c.name} {c.count}
                      </Badge>
                    ))}
                    {view.next_cursor && <Text size="xs">and more</Text>}
                    {view.changes.length === 0 && !event.schema_changed && "nothing"}
                  </Group>
                </Table.Td>
              </Table.Tr>
            </Table.Tbody>
          </Table>
          {view.schema && (
            <Stack gap={2} mt="xs" data-testid="revision-schema">
              <Text size="sm" fw={600}>
                The schema changed (version {view.revision.schema_version.slice(0, 12)})
              </Text>
              <List size="sm">
                {view.schema.added.map((name) => (
                  <List.Item key={`+${name}`}>added {name}</List.Item>
                ))}
                {view.schema.changed.map((name) => (
                  <List.Item key={`~${name}`}>changed {name}</List.Item>
                ))}
                {view.schema.removed.map((name) => (
                  <List.Item key={`-${name}`}>removed {name}</List.Item>
                ))}
              </List>
            </Stack>
          )}
          <Anchor component={Link} size="sm" to={domainPath(domain, "records", { branch: branchName, at: event.id })}>
            Read the Records at this Revision
          </Anchor>
        </Paper>
      )}
      {view?.schema && event?.parents[0] && <SchemaChangesPanel domain={domain} range={{ branch: branchName, from: event.parents[0], to: event.id }} />}
      <ProblemAlert error={diff.error} title="The changes cannot be read" />
      {diff.data && (
        <Paper withBorder p="md">
          <Title order={2} size="h5" mb="xs">
            What it changed
          </Title>
          <DiffView domain={domain} diff={diff.data} />
        </Paper>
      )}
    </Stack>
  );
}

/**
 * `/d/:domain/revisions/:revision?branch=&parent=`: what one Revision changed, who made it, why
 * (its message) and where it came from (its origin), with its parents. The Revision's event is read
 * from the branch's change feed (from `parent` when the link knows it, else the whole feed), and
 * its changes with `GET .../diff?from=<first parent>&to=<revision>`.
 */
import { Anchor, Badge, Group, Paper, Stack, Table, Text, Title } from "@mantine/core";
import { Link, useParams, useSearchParams } from "react-router";
import { allChanges, getChanges } from "../api/domain";
import { getDiff } from "../api/records";
import type { DiffResult, RevisionEvent } from "../api/types";
import { DiffView } from "../diff/DiffView";
import { useDomain } from "../shell/DomainLayout";
import { ProblemAlert } from "../shell/ProblemAlert";
import { formatTime, shortRevision } from "../shell/format";
import { domainPath, useReadPoint } from "../shell/readPoint";
import { usePageTitle } from "../shell/title";
import { useApi } from "../shell/useApi";

/** The path of a Revision's page (with its first parent when known: one feed page instead of all). */
export function revisionPath(domain: string, branch: string, revision: string, parent?: string): string {
  return domainPath(domain, `revisions/${encodeURIComponent(revision)}`, { branch, at: "" }, { parent: parent ?? "" });
}

async function findRevision(domain: string, branch: string, revision: string, parent: string): Promise<RevisionEvent | null> {
  if (parent) {
    const page = await getChanges(domain, branch, parent, 5);
    const found = page.events.find((e) => e.revision === revision || e.revision.startsWith(revision));
    if (found) return found;
  }
  const events = await allChanges(domain, branch);
  return events.find((e) => e.revision === revision || e.revision.startsWith(revision)) ?? null;
}

export function RevisionPage() {
  const { domain } = useReadPoint();
  const { revision = "" } = useParams();
  const { branchName } = useDomain();
  const [params] = useSearchParams();
  const parent = params.get("parent") ?? "";
  usePageTitle(`Revision ${shortRevision(revision)}`, domain);
  const found = useApi(branchName ? () => findRevision(domain, branchName, revision, parent) : null, [domain, branchName, revision, parent]);
  const event = found.data;
  const diff = useApi<DiffResult | null>(
    event ? () => (event.parents[0] ? getDiff(domain, branchName, event.parents[0], event.revision) : Promise.resolve(null)) : null,
    [event?.revision, branchName],
  );
  return (
    <Stack gap="md" data-testid="revision-page">
      <Title order={2} size="h3">
        Revision{" "}
        <Text span ff="monospace" inherit>
          {shortRevision(event?.revision ?? revision)}
        </Text>
      </Title>
      <ProblemAlert error={found.error} title="The Revision cannot be read" />
      {found.data === null && (
        <Text c="dimmed" data-testid="revision-missing">
          No Revision {revision} on branch {branchName}'s history.
        </Text>
      )}
      {event && (
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
                <Table.Td>
                  {event.origin.type}
                  {event.origin.ref ? ` · ${event.origin.ref}` : ""}
                </Table.Td>
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
                    {Object.entries(event.kinds).map(([kind, n]) => (
                      <Badge key={kind} variant="light">
                        {kind} {n}
                      </Badge>
                    ))}
                    {Object.entries(event.relations).map(([relation, n]) => (
                      <Badge key={relation} variant="light" color="gray">
                        {relation} {n}
                      </Badge>
                    ))}
                  </Group>
                </Table.Td>
              </Table.Tr>
            </Table.Tbody>
          </Table>
          <Anchor component={Link} size="sm" to={domainPath(domain, "records", { branch: branchName, at: event.revision })}>
            Read the Records at this Revision
          </Anchor>
        </Paper>
      )}
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

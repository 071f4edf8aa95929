/**
 * The Domains the signed-in principal may read (`GET /api/v1/domains`: those it holds a grant in,
 * every one for the admin), each a link to its overview. Where sign-in goes when no Domain is named.
 */
import { Anchor, Paper, Stack, Table, Text, Title } from "@mantine/core";
import { Link } from "react-router";
import { listDomains } from "../api/domain";
import { ProblemAlert } from "../shell/ProblemAlert";
import { lastDomain } from "../shell/lastDomain";
import { usePageTitle } from "../shell/title";
import { useApi } from "../shell/useApi";

export function DomainsPage() {
  usePageTitle("Domains");
  const domains = useApi(() => listDomains(), []);
  const last = lastDomain();
  const list = domains.data?.domains ?? [];
  return (
    <Stack gap="md" maw={720} data-testid="domains-page">
      <Title order={1} size="h2">
        Domains
      </Title>
      <Text size="sm" c="dimmed">
        The Domains you hold a grant in. Open one to see its overview, Records and Proposals.
      </Text>
      <ProblemAlert error={domains.error} />
      {domains.data && list.length === 0 && (
        <Paper withBorder p="md" data-testid="no-domains">
          <Text size="sm">You hold no grant in any Domain yet: ask a Domain admin for one.</Text>
        </Paper>
      )}
      {list.length > 0 && (
        <Table striped highlightOnHover data-testid="domain-list">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Domain</Table.Th>
              <Table.Th>Default branch</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((d) => (
              <Table.Tr key={d.name}>
                <Table.Td>
                  <Anchor component={Link} to={`/d/${encodeURIComponent(d.name)}`} fw={d.name === last ? 700 : undefined}>
                    {d.name}
                  </Anchor>
                  {d.name === last && (
                    <Text span size="xs" c="dimmed" ml="xs">
                      last opened
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>{d.default_branch}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}

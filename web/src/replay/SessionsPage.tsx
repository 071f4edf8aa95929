/**
 * `/app/sessions`: the agent sessions the caller may read (its own; the admin sees all), newest
 * first, from `GET /api/v1/sessions`, with filters by Domain and principal and "more" pages
 * (keyset: `before` is the answer's `next`).
 */

import { Anchor, Badge, Button, Group, Stack, Table, Text, TextInput, Title } from "@mantine/core";
import { useEffect, useState } from "react";
import { Link, useSearchParams } from "react-router";
import { ProblemAlert } from "../shell/ProblemAlert";
import { listSessions } from "./api";
import type { SessionSummary } from "./types";
import { usePageTitle } from "../shell/title";

export function SessionsPage() {
  usePageTitle("Agent sessions");
  const [params, setParams] = useSearchParams();
  const domain = params.get("domain") ?? "";
  const principal = params.get("principal") ?? "";
  const [rows, setRows] = useState<SessionSummary[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);

  const load = (before?: string) => {
    setLoading(true);
    return listSessions({ domain, principal, before })
      .then((page) => {
        setRows((known) => (before ? [...known, ...page.sessions] : page.sessions));
        setNext(page.next);
        setError(null);
      })
      .catch(setError)
      .finally(() => setLoading(false));
  };

  useEffect(() => {
    void load();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [domain, principal]);

  const filter = (name: string, value: string) =>
    setParams((current) => {
      const updated = new URLSearchParams(current);
      if (value) updated.set(name, value);
      else updated.delete(name);
      return updated;
    });

  return (
    <Stack gap="sm">
      <Title order={2}>Agent sessions</Title>
      <Text size="sm" c="dimmed">
        Calls sent with a <code>Lorebase-Session</code> header become steps of that session; open one to replay it.
      </Text>
      <Group>
        <TextInput
          label="Domain"
          placeholder="any"
          defaultValue={domain}
          onBlur={(e) => filter("domain", e.currentTarget.value.trim())}
        />
        <TextInput
          label="Principal"
          placeholder="any"
          defaultValue={principal}
          onBlur={(e) => filter("principal", e.currentTarget.value.trim())}
        />
      </Group>
      <ProblemAlert error={error} />
      <Table striped highlightOnHover data-testid="sessions-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Session</Table.Th>
            <Table.Th>Principal</Table.Th>
            <Table.Th>Domains</Table.Th>
            <Table.Th>Started</Table.Th>
            <Table.Th>Last call</Table.Th>
            <Table.Th ta="right">Steps</Table.Th>
            <Table.Th ta="right">Errors</Table.Th>
            <Table.Th ta="right">Notes</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((row) => (
            <Table.Tr key={row.session}>
              <Table.Td>
                <Anchor component={Link} to={`/sessions/${encodeURIComponent(row.session)}`} ff="monospace">
                  {row.session}
                </Anchor>
              </Table.Td>
              <Table.Td>{row.principal}</Table.Td>
              <Table.Td>{row.domains.join(", ")}</Table.Td>
              <Table.Td>{row.started_at}</Table.Td>
              <Table.Td>{row.last_at}</Table.Td>
              <Table.Td ta="right">{row.steps}</Table.Td>
              <Table.Td ta="right">
                {row.errors > 0 ? <Badge color="orange">{row.errors}</Badge> : 0}
              </Table.Td>
              <Table.Td ta="right">{row.notes}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {!loading && rows.length === 0 && !error && <Text c="dimmed">No sessions yet.</Text>}
      {next && (
        <Button variant="default" loading={loading} onClick={() => void load(next)}>
          More
        </Button>
      )}
    </Stack>
  );
}

/**
 * A query's answer: the Records (each linking to its page) or the counts per value, and beside it
 * the coverage block: how many Records each Kind holds, as of which Revision, how often the
 * Attributes the query used are missing, and the notes to read before concluding "nothing matches".
 */
import { Anchor, Button, Grid, Group, List, Paper, Table, Text, Title } from "@mantine/core";
import { Link } from "react-router";
import type { QueryResult } from "../api/types";
import { formatValue, shortRevision } from "../shell/format";
import { recordPath, type ReadPoint } from "../shell/readPoint";

interface Props {
  domain: string;
  point: ReadPoint;
  answer: QueryResult;
  onNextPage?: () => void;
}

export function QueryAnswer({ domain, point, answer, onNextPage }: Props) {
  const records = answer.records ?? [];
  const columns = [...new Set(records.flatMap((r) => Object.keys(r.values)))];
  return (
    <Grid gap="md">
      <Grid.Col span={{ base: 12, lg: 9 }}>
        <Paper withBorder p="sm" data-testid="query-answer">
          <Text size="sm" c="dimmed" mb="xs">
            {answer.aggregate
              ? `${answer.aggregate.count} matching Records`
              : `${answer.count ?? records.length} Records on this page`}{" "}
            at {shortRevision(answer.revision)} on {answer.branch}
          </Text>
          {answer.aggregate?.groups && (
            <Table striped withTableBorder data-testid="query-groups">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{answer.aggregate.group_by}</Table.Th>
                  <Table.Th ta="right">Records</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {answer.aggregate.groups.map((g, i) => (
                  <Table.Tr key={i}>
                    <Table.Td>{formatValue(g.value)}</Table.Td>
                    <Table.Td ta="right">{g.count}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )}
          {!answer.aggregate && (
            <Table.ScrollContainer minWidth={600}>
              <Table striped withTableBorder fz="sm" data-testid="query-records">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Record</Table.Th>
                    <Table.Th>Title</Table.Th>
                    {columns.map((c) => (
                      <Table.Th key={c}>{c}</Table.Th>
                    ))}
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {records.map((r) => (
                    <Table.Tr key={r.ref}>
                      <Table.Td>
                        <Anchor component={Link} to={recordPath(domain, r.kind, r.key, point)} ff="monospace" size="sm" style={{ whiteSpace: "nowrap" }}>
                          {r.ref}
                        </Anchor>
                      </Table.Td>
                      <Table.Td>{r.title ?? ""}</Table.Td>
                      {columns.map((c) => (
                        <Table.Td key={c}>{formatValue(r.values[c])}</Table.Td>
                      ))}
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
          )}
          {answer.next_cursor && onNextPage && (
            <Group mt="sm">
              <Button size="xs" variant="light" onClick={onNextPage}>
                Next page
              </Button>
            </Group>
          )}
        </Paper>
      </Grid.Col>
      <Grid.Col span={{ base: 12, lg: 3 }}>
        <Paper withBorder p="sm" data-testid="coverage">
          <Title order={5}>Coverage</Title>
          {!answer.coverage && <Text size="sm" c="dimmed">Not asked.</Text>}
          {answer.coverage && (
            <>
              <List size="sm" mt={4}>
                {answer.coverage.kinds.map((k) => (
                  <List.Item key={k.kind}>
                    {k.kind}: {k.records} Records{k.approximate ? " (approximately)" : ""} as of {shortRevision(k.as_of)}
                  </List.Item>
                ))}
              </List>
              {answer.coverage.attributes.length > 0 && (
                <List size="sm" mt={4}>
                  {answer.coverage.attributes.map((a) => (
                    <List.Item key={`${a.kind}.${a.attribute}`}>
                      {a.kind}.{a.attribute} ({a.used_in.join(", ")}): missing in {a.missing_records} Records (
                      {(a.missing * 100).toFixed(0)}%)
                    </List.Item>
                  ))}
                </List>
              )}
              {answer.coverage.notes.map((note, i) => (
                <Text key={i} size="sm" c="#a34200" mt={4}>
                  {note}
                </Text>
              ))}
            </>
          )}
        </Paper>
      </Grid.Col>
    </Grid>
  );
}

/**
 * A query's answer: the Records (each linking to its page) or the counts per value, and beside it
 * the coverage block: how many Records each Kind holds, as of which Revision, how often the
 * Attributes the query used are missing, and the notes to read before concluding "nothing matches".
 */
import { Anchor, Button, Grid, Group, List, Paper, Table, Text, Title, UnstyledButton } from "@mantine/core";
import { Link } from "react-router";
import type { QueryResult } from "../api/types";
import { formatValue, shortRevision } from "../shell/format";
import { recordPath, type ReadPoint } from "../shell/readPoint";

interface Props {
  domain: string;
  point: ReadPoint;
  answer: QueryResult;
  /** 1-based, with the page size and the query's total when known. */
  page?: number;
  pageSize?: number;
  total?: number | null;
  onNextPage?: () => void;
  onPreviousPage?: () => void;
  /** The query's order (`-name` descending); a column's header calls `onSort` with its name. */
  orderBy?: string[];
  onSort?: (column: string) => void;
}

function pageLine(answer: QueryResult, page: number, pageSize: number, total: number | null | undefined): string {
  const shown = answer.records?.length ?? 0;
  const first = (page - 1) * pageSize + 1;
  const range = shown === 0 ? "No Records" : `Records ${first}–${first + shown - 1}`;
  return `${range}${total !== null && total !== undefined ? ` of ${total}` : ""} · page ${page}`;
}

function SortHeader({ column, label, orderBy, onSort }: { column: string; label: string; orderBy: string[]; onSort?: (c: string) => void }) {
  const direction = orderBy[0] === column ? "ascending" : orderBy[0] === `-${column}` ? "descending" : "none";
  if (!onSort) return <Table.Th>{label}</Table.Th>;
  return (
    <Table.Th aria-sort={direction}>
      <UnstyledButton onClick={() => onSort(column)} fz="sm" fw={700} data-testid={`sort-${column}`}>
        {label} {direction === "ascending" ? "↑" : direction === "descending" ? "↓" : ""}
      </UnstyledButton>
    </Table.Th>
  );
}

export function QueryAnswer({ domain, point, answer, page = 1, pageSize = 50, total, onNextPage, onPreviousPage, orderBy = [], onSort }: Props) {
  const records = answer.records ?? [];
  const columns = [...new Set(records.flatMap((r) => Object.keys(r.values)))];
  return (
    <Grid gap="md">
      <Grid.Col span={{ base: 12, lg: 9 }}>
        <Paper withBorder p="sm" data-testid="query-answer">
          <Text size="sm" c="dimmed" mb="xs" data-testid="query-page">
            {answer.aggregate ? `${answer.aggregate.count} matching Records` : pageLine(answer, page, pageSize, total)}{" "}
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
                      <SortHeader key={c} column={c} label={c} orderBy={orderBy} onSort={onSort} />
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
          {!answer.aggregate && (onNextPage || onPreviousPage) && (
            <Group mt="sm" gap="xs">
              <Button size="xs" variant="light" onClick={onPreviousPage} disabled={!onPreviousPage}>
                Previous page
              </Button>
              <Button size="xs" variant="light" onClick={onNextPage} disabled={!onNextPage}>
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

/** Why the Record is what it is: how it was created, how many changes it has had, the Proposals
 * that touched it, and per Attribute the change that set the value now held. */
import { List, Paper, Stack, Table, Text } from "@mantine/core";
import { explainRecord } from "../../api/records";
import { ProblemAlert } from "../../shell/ProblemAlert";
import { formatTime, formatValue, shortRevision } from "../../shell/format";
import { useApi } from "../../shell/useApi";
import type { RecordTabProps } from "./props";

export function ExplainTab({ domain, kind, recordKey, point }: RecordTabProps) {
  const explain = useApi(() => explainRecord(domain, kind, recordKey, point), [domain, kind, recordKey, point.branch, point.at]);
  const data = explain.data;
  return (
    <Stack gap="sm" data-testid="explain">
      <ProblemAlert error={explain.error} />
      {data && (
        <>
          <Paper withBorder p="sm">
            <List size="sm">
              {data.created && (
                <List.Item>
                  Created in <code>{shortRevision(data.created.revision)}</code> at {formatTime(data.created.at)} by{" "}
                  {data.created.author} ({data.created.origin.type} {data.created.origin.ref}): {data.created.message}
                </List.Item>
              )}
              <List.Item>
                {data.changes} change{data.changes === 1 ? "" : "s"} on this branch{data.changes_truncated ? " (at least)" : ""}
              </List.Item>
              <List.Item>
                {data.proposals.length} Proposal{data.proposals.length === 1 ? "" : "s"} touched it
              </List.Item>
            </List>
          </Paper>
          <Table striped withTableBorder fz="sm">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Attribute</Table.Th>
                <Table.Th>Value</Table.Th>
                <Table.Th>Set by</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {data.attributes.map((a) => (
                <Table.Tr key={a.name}>
                  <Table.Td ff="monospace">{a.name}</Table.Td>
                  <Table.Td>{formatValue(a.value)}</Table.Td>
                  <Table.Td>
                    <Text size="sm">
                      {a.actor}, {formatTime(a.at)}: {a.message} ({a.origin.type}
                      {a.operation ? ` ${a.operation.name}` : ""}
                      {a.proposal ? `, Proposal ${String(a.proposal)}` : ""}) in <code>{shortRevision(a.revision)}</code>
                    </Text>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </>
      )}
    </Stack>
  );
}

/** The Record's Links (from the explanation: Relation, from, to, since which Revision), each end a
 * link to its Record page, and the count per Relation name the Record read gives. */
import { Anchor, Badge, Group, Table, Text } from "@mantine/core";
import { Link } from "react-router";
import { explainRecord } from "../../api/records";
import type { RecordView } from "../../api/types";
import { ProblemAlert } from "../../shell/ProblemAlert";
import { shortRevision, splitRef } from "../../shell/format";
import { recordPath, type ReadPoint } from "../../shell/readPoint";
import { useApi } from "../../shell/useApi";
import type { RecordTabProps } from "./props";

function RefLink({ domain, value, point, self }: { domain: string; value: string; point: ReadPoint; self: string }) {
  const ref = splitRef(value);
  if (!ref || value === self) return <Text size="sm" ff="monospace">{value}</Text>;
  return (
    <Anchor component={Link} to={recordPath(domain, ref.kind, ref.key, point)} ff="monospace" size="sm">
      {value}
    </Anchor>
  );
}

export function LinksTab({ domain, kind, recordKey, point, record }: RecordTabProps & { record: RecordView }) {
  const explain = useApi(() => explainRecord(domain, kind, recordKey, point), [domain, kind, recordKey, point.branch, point.at]);
  return (
    <>
      <Group gap="xs" mb="sm">
        {Object.entries(record.links ?? {}).map(([name, count]) => (
          <Badge key={name} variant="light">
            {name}: {count}
          </Badge>
        ))}
      </Group>
      <ProblemAlert error={explain.error} />
      {explain.data && (
        <Table striped withTableBorder fz="sm" data-testid="record-links">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Relation</Table.Th>
              <Table.Th>From</Table.Th>
              <Table.Th>To</Table.Th>
              <Table.Th>Since</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {explain.data.links.map((link, i) => (
              <Table.Tr key={i}>
                <Table.Td>{link.relation}</Table.Td>
                <Table.Td>
                  <RefLink domain={domain} value={link.from} point={point} self={record.ref} />
                </Table.Td>
                <Table.Td>
                  <RefLink domain={domain} value={link.to} point={point} self={record.ref} />
                </Table.Td>
                <Table.Td ff="monospace">{shortRevision(link.revision)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {explain.data?.links_truncated && (
        <Text size="xs" c="dimmed" mt={4}>
          More Links exist than the explanation lists.
        </Text>
      )}
    </>
  );
}

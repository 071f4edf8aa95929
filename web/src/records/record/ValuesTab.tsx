/** The Record's values, each with where it came from: the Revision, who, when, origin and message. */
import { Anchor, Table, Text } from "@mantine/core";
import { Link } from "react-router";
import { explainRecord } from "../../api/records";
import type { RecordView } from "../../api/types";
import { ProblemAlert } from "../../shell/ProblemAlert";
import { formatTime, formatValue, shortRevision } from "../../shell/format";
import { domainPath } from "../../shell/readPoint";
import { useApi } from "../../shell/useApi";
import type { RecordTabProps } from "./props";

export function ValuesTab({ domain, kind, recordKey, point, record }: RecordTabProps & { record: RecordView }) {
  const explain = useApi(() => explainRecord(domain, kind, recordKey, point), [domain, kind, recordKey, point.branch, point.at]);
  const lineage = Object.fromEntries((explain.data?.attributes ?? []).map((a) => [a.name, a]));
  return (
    <>
      <ProblemAlert error={explain.error} title="The lineage cannot be read" />
      <Table striped withTableBorder fz="sm" data-testid="record-values">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Attribute</Table.Th>
            <Table.Th>Value</Table.Th>
            <Table.Th>Revision</Table.Th>
            <Table.Th>Who</Table.Th>
            <Table.Th>When</Table.Th>
            <Table.Th>Origin</Table.Th>
            <Table.Th>Message</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {Object.entries(record.values).map(([name, value]) => {
            const source = lineage[name];
            return (
              <Table.Tr key={name}>
                <Table.Td ff="monospace">{name}</Table.Td>
                <Table.Td>{formatValue(value)}</Table.Td>
                <Table.Td ff="monospace">
                  {source && (
                    <Anchor component={Link} to={domainPath(domain, "", { branch: point.branch, at: source.revision })} size="sm">
                      {shortRevision(source.revision)}
                    </Anchor>
                  )}
                </Table.Td>
                <Table.Td>{source?.actor ?? ""}</Table.Td>
                <Table.Td>{formatTime(source?.at)}</Table.Td>
                <Table.Td>
                  {source && (
                    <Text size="sm">
                      {source.origin.type}
                      {source.operation ? ` ${source.operation.name}` : ""}
                      {source.import ? ` ${source.import.source}` : ""}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>{source?.message ?? ""}</Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </>
  );
}

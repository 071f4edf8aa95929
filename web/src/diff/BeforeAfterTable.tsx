/** Before/after rows as a table, the changed cells coloured. */
import { Table, Text } from "@mantine/core";
import { formatValue } from "../shell/format";
import type { BeforeAfterRow } from "./beforeAfter";

const COLOR = { added: "green", removed: "red", changed: "orange", unchanged: "dimmed" } as const;

export function BeforeAfterTable({ rows }: { rows: BeforeAfterRow[] }) {
  if (rows.length === 0) return <Text size="sm" c="dimmed">No values.</Text>;
  return (
    <Table withTableBorder fz="sm" data-testid="before-after">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Attribute</Table.Th>
          <Table.Th>Before</Table.Th>
          <Table.Th>After</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((row) => (
          <Table.Tr key={row.attribute} data-change={row.change}>
            <Table.Td ff="monospace">{row.attribute}</Table.Td>
            <Table.Td>
              <Text size="sm" td={row.change === "changed" || row.change === "removed" ? "line-through" : undefined} c={row.change === "removed" ? "red" : undefined}>
                {formatValue(row.before)}
              </Text>
            </Table.Td>
            <Table.Td>
              <Text size="sm" c={COLOR[row.change]} fw={row.change === "unchanged" ? undefined : 600}>
                {formatValue(row.after)}
              </Text>
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/** Before/after rows as a table, the changed cells coloured. A review adds the target's value now
 * (beside the base and the source's) and marks the Attributes with an open Conflict. */
import { Badge, Table, Text } from "@mantine/core";
import type { Values } from "../api/types";
import { formatValue } from "../shell/format";
import type { BeforeAfterRow } from "./beforeAfter";

// A dark green, shade 9 of red and a dark orange: 4.5:1 or more on white (WCAG AA; shade 9 of green is 4.4:1).
const COLOR = { added: "#1e6f30", removed: "red.9", changed: "#a34200", unchanged: "dimmed" } as const;

interface Review {
  /** The target branch's values now (null: the Record is not on the target). */
  target: Values | null;
  /** Attributes with an open Conflict. */
  conflicts: ReadonlySet<string>;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

export function BeforeAfterTable({ rows, review, labels }: { rows: BeforeAfterRow[]; review?: Review; labels?: { before: string; after: string } }) {
  if (rows.length === 0) return <Text size="sm" c="dimmed">No values.</Text>;
  const before = labels?.before ?? "Before";
  const after = labels?.after ?? "After";
  return (
    <Table withTableBorder fz="sm" data-testid="before-after">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Attribute</Table.Th>
          <Table.Th>{before}</Table.Th>
          {review && <Table.Th>Target now</Table.Th>}
          <Table.Th>{after}</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((row) => {
          const conflict = review?.conflicts.has(row.attribute) ?? false;
          const targetValue = review?.target ? (review.target[row.attribute] ?? null) : null;
          const moved = review !== undefined && review.target !== null && !same(targetValue, row.before);
          return (
            <Table.Tr key={row.attribute} data-change={row.change} data-conflict={conflict ? "open" : undefined} bg={conflict ? "red.0" : undefined}>
              <Table.Td ff="monospace">
                {row.attribute}
                {conflict && (
                  <Badge size="xs" color="red" ml={6} data-testid="conflict-mark">
                    Conflict
                  </Badge>
                )}
              </Table.Td>
              <Table.Td>
                <Text size="sm" td={row.change === "changed" || row.change === "removed" ? "line-through" : undefined} c={row.change === "removed" ? "red.9" : undefined}>
                  {formatValue(row.before)}
                </Text>
              </Table.Td>
              {review && (
                <Table.Td data-testid="target-now">
                  {review.target === null ? (
                    <Text size="sm" c="dimmed">
                      not on the target
                    </Text>
                  ) : (
                    <Text size="sm" fw={moved ? 600 : undefined} c={moved ? "red.9" : undefined} title={moved ? "changed on the target since the base" : undefined}>
                      {formatValue(targetValue)}
                    </Text>
                  )}
                </Table.Td>
              )}
              <Table.Td>
                <Text size="sm" c={COLOR[row.change]} fw={row.change === "unchanged" ? undefined : 600}>
                  {formatValue(row.after)}
                </Text>
              </Table.Td>
            </Table.Tr>
          );
        })}
      </Table.Tbody>
    </Table>
  );
}

/** The health summary in a few numbers: healthy or not, and what is wrong how often. */
import { Badge, Group, SimpleGrid, Text } from "@mantine/core";
import type { DataHealth } from "../api/types";

const PROBLEMS: Array<[keyof DataHealth["summary"], string]> = [
  ["invalid_records", "invalid Records"],
  ["orphan_links", "orphan Links"],
  ["required_gaps", "required Links missing"],
  ["duplicate_groups", "duplicate groups"],
  ["stale_derived_kinds", "stale derived Kinds"],
];

export function HealthSummaryCard({ health }: { health: DataHealth }) {
  const s = health.summary;
  return (
    <div data-testid="health-summary">
      <Group gap="xs" mb="xs">
        <Badge color={s.ok ? "green" : "red"} size="lg">
          {s.ok ? "healthy" : "needs attention"}
        </Badge>
        <Text size="sm">
          {s.kinds} Kinds, {s.records.toLocaleString("en")} Records, {s.links.toLocaleString("en")} Links
        </Text>
      </Group>
      <SimpleGrid cols={{ base: 2, sm: 3 }} spacing="xs">
        {PROBLEMS.map(([member, label]) => (
          <Text key={member} size="sm" c={Number(s[member]) > 0 ? "red" : "dimmed"}>
            {String(s[member])} {label}
          </Text>
        ))}
      </SimpleGrid>
    </div>
  );
}

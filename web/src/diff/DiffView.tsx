/** A diff (`GET .../diff`) Record by Record, each Record a link and its change as before/after, and
 * the Links added, removed or changed. */
import { Anchor, Badge, Group, List, Stack, Text } from "@mantine/core";
import { Link } from "react-router";
import type { DiffResult } from "../api/types";
import { recordPath } from "../shell/readPoint";
import { BeforeAfterTable } from "./BeforeAfterTable";
import { recordDiffs } from "./beforeAfter";

const COLORS = { added: "green", removed: "red", changed: "orange" } as const;

export function DiffView({ domain, diff }: { domain: string; diff: DiffResult }) {
  const records = recordDiffs(diff);
  const links = [
    ...diff.links.added.map((l) => ["added", l.ref] as const),
    ...diff.links.removed.map((l) => ["removed", l.ref] as const),
    ...diff.links.changed.map((l) => ["changed", l.ref] as const),
  ];
  if (records.length === 0 && links.length === 0) return <Text size="sm" c="dimmed">Nothing you may read changed.</Text>;
  return (
    <Stack gap="sm" data-testid="diff">
      <Text size="sm" data-testid="diff-summary">
        {diff.records.added.length} Records added, {diff.records.changed.length} changed, {diff.records.removed.length} removed ·{" "}
        {diff.links.added.length} Links added, {diff.links.changed.length} changed, {diff.links.removed.length} removed
      </Text>
      {records.map((record) => (
        <div key={record.ref} data-testid="diff-record">
          <Group gap="xs" mb={4}>
            <Badge size="sm" color={COLORS[record.change]}>
              {record.change}
            </Badge>
            {record.kind ? (
              <Anchor component={Link} to={recordPath(domain, record.kind, record.key, { branch: diff.branch, at: diff.to })} ff="monospace" size="sm">
                {record.ref}
              </Anchor>
            ) : (
              <Text ff="monospace" size="sm">
                {record.ref}
              </Text>
            )}
          </Group>
          <BeforeAfterTable rows={record.rows} />
        </div>
      ))}
      {links.length > 0 && (
        <List size="sm">
          {links.map(([change, ref]) => (
            <List.Item key={`${change}:${ref}`}>
              Link {change}: <code>{ref}</code>
            </List.Item>
          ))}
        </List>
      )}
    </Stack>
  );
}

/** The Record's history, newest first, as a timeline: each change with who, when, why, and the
 * values before and after (`values=true`); older pages on demand. */
import { Badge, Button, Group, Text, Timeline } from "@mantine/core";
import { useState } from "react";
import { getHistory } from "../../api/records";
import type { HistoryChange } from "../../api/types";
import { BeforeAfterTable } from "../../diff/BeforeAfterTable";
import { historyRows } from "../../diff/beforeAfter";
import { ProblemAlert } from "../../shell/ProblemAlert";
import { formatTime, shortRevision } from "../../shell/format";
import { useApi } from "../../shell/useApi";
import type { RecordTabProps } from "./props";

const COLORS: Record<string, string> = { created: "green", modified: "blue", deleted: "red" };

export function HistoryTab({ domain, kind, recordKey, point }: RecordTabProps) {
  const first = useApi(() => getHistory(domain, kind, recordKey, point), [domain, kind, recordKey, point.branch, point.at]);
  const [more, setMore] = useState<HistoryChange[]>([]);
  const [cursor, setCursor] = useState<string | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const changes = [...(first.data?.changes ?? []), ...more];
  const next = cursor === undefined ? first.data?.next_cursor : cursor;

  const loadMore = async () => {
    if (!next) return;
    try {
      const page = await getHistory(domain, kind, recordKey, point, next);
      setMore((m) => [...m, ...page.changes]);
      setCursor(page.next_cursor);
    } catch (problem) {
      setError(problem);
    }
  };

  return (
    <>
      <ProblemAlert error={first.error ?? error} />
      <Timeline bulletSize={18} lineWidth={2} data-testid="history">
        {changes.map((change) => (
          <Timeline.Item
            key={change.revision}
            color={COLORS[change.change] ?? "gray"}
            title={
              <Group gap="xs">
                <Badge size="sm" color={COLORS[change.change] ?? "gray"}>
                  {change.change}
                </Badge>
                <Text size="sm" fw={600}>
                  {change.message || "(no message)"}
                </Text>
              </Group>
            }
          >
            <Text size="xs" c="dimmed" mb={4}>
              {formatTime(change.at)} by {change.author} · {change.origin.type} {change.origin.ref} · Revision{" "}
              <Text span ff="monospace" size="xs">
                {shortRevision(change.revision)}
              </Text>
            </Text>
            <BeforeAfterTable rows={historyRows(change)} />
          </Timeline.Item>
        ))}
      </Timeline>
      {next && (
        <Button mt="sm" size="xs" variant="light" onClick={loadMore}>
          Older changes
        </Button>
      )}
    </>
  );
}

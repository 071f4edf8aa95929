/** What the Proposal changes, Record by Record (each Record a link, each change as before/after),
 * and the Links it adds, removes or changes. */
import { Anchor, Badge, Group, List, Paper, Stack, Text, Title } from "@mantine/core";
import { Link } from "react-router";
import type { Proposal } from "../api/types";
import { BeforeAfterTable } from "../diff/BeforeAfterTable";
import { recordDiffs } from "../diff/beforeAfter";
import { ProblemAlert } from "../shell/ProblemAlert";
import { shortRevision } from "../shell/format";
import { recordPath } from "../shell/readPoint";
import { useApi } from "../shell/useApi";
import { proposalDiff } from "./proposalDiff";

const COLORS = { added: "green", removed: "red", changed: "orange" } as const;

export function ProposalDiffPanel({ domain, proposal }: { domain: string; proposal: Proposal }) {
  const diff = useApi(() => proposalDiff(domain, proposal), [domain, proposal.id, proposal.status, proposal.updated_at]);
  const data = diff.data;
  const links = data ? [...data.links.added.map((l) => ["added", l.ref] as const), ...data.links.removed.map((l) => ["removed", l.ref] as const), ...data.links.changed.map((l) => ["changed", l.ref] as const)] : [];
  return (
    <Paper withBorder p="sm" data-testid="proposal-diff">
      <Title order={5} mb="xs">
        Changes
      </Title>
      <ProblemAlert error={diff.error} title="The changes cannot be read" />
      {diff.loading && <Text size="sm" c="dimmed">Reading the changes…</Text>}
      {!diff.loading && data === null && <Text size="sm" c="dimmed">No changes to show (the source branch has no Revision of its own, or is gone).</Text>}
      {data && (
        <Stack gap="sm">
          <Text size="xs" c="dimmed">
            {data.branch}: {shortRevision(data.from)} → {shortRevision(data.to)}
          </Text>
          {recordDiffs(data).map((record) => (
            <div key={record.ref} data-testid="diff-record">
              <Group gap="xs" mb={4}>
                <Badge size="sm" color={COLORS[record.change]}>
                  {record.change}
                </Badge>
                {record.kind ? (
                  <Anchor component={Link} to={recordPath(domain, record.kind, record.key, { branch: data.branch, at: "" })} ff="monospace" size="sm">
                    {record.ref}
                  </Anchor>
                ) : (
                  <Text ff="monospace" size="sm">{record.ref}</Text>
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
      )}
    </Paper>
  );
}

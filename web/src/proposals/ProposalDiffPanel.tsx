/** What the Proposal changes, Record by Record (each Record a link, each change as base / target
 * now / source), the Attributes with an open Conflict marked, and the Links it adds, removes or
 * changes. While the Proposal is open, each changed Record is also read on the target as it is now
 * (the base is where the source started; the target may have moved since). */
import { Anchor, Badge, Group, List, Paper, Stack, Text, Title } from "@mantine/core";
import { Link } from "react-router";
import { getDiff, getRecord } from "../api/records";
import type { Conflict, Proposal, Values } from "../api/types";
import { BeforeAfterTable } from "../diff/BeforeAfterTable";
import { recordDiffs } from "../diff/beforeAfter";
import { ProblemAlert } from "../shell/ProblemAlert";
import { shortRevision } from "../shell/format";
import { recordPath } from "../shell/readPoint";
import { useApi, type ApiState } from "../shell/useApi";
import type { DiffRange } from "./proposalDiff";

const COLORS = { added: "green", removed: "red", changed: "orange" } as const;

/** Records read on the target at most (the rest show base and source only). */
const TARGET_READS = 50;

/** The target's values now of the Records `refs` (null: not on the target). */
async function targetValues(domain: string, target: string, refs: string[]): Promise<Map<string, Values | null>> {
  const found = new Map<string, Values | null>();
  await Promise.all(
    refs.slice(0, TARGET_READS).map(async (ref) => {
      const slash = ref.indexOf("/");
      try {
        const record = await getRecord(domain, ref.slice(0, slash), ref.slice(slash + 1), { branch: target, at: "" });
        found.set(ref, record.values);
      } catch {
        found.set(ref, null);
      }
    }),
  );
  return found;
}

/** `range`: the Revisions the Proposal brings (proposalRange, read once by the page for this diff
 * and its schema changes). */
export function ProposalDiffPanel({ domain, proposal, range, conflicts = [] }: { domain: string; proposal: Proposal; range: ApiState<DiffRange | null>; conflicts?: Conflict[] }) {
  const r = range.data;
  const diff = useApi(r !== undefined ? () => (r ? getDiff(domain, r.branch, r.from, r.to) : Promise.resolve(null)) : null, [domain, r?.branch, r?.from, r?.to]);
  const data = diff.data;
  const loading = range.loading || diff.loading;
  const open = proposal.status === "open";
  const refs = data ? recordDiffs(data).filter((r) => r.change !== "added").map((r) => r.ref) : [];
  const target = useApi(open && data ? () => targetValues(domain, proposal.target_ref, refs) : null, [data, open, proposal.target_ref]);
  const conflicted = new Map<string, Set<string>>();
  for (const c of conflicts) {
    if (c.status !== "open" || c.entity !== "record") continue;
    const set = conflicted.get(c.ref) ?? new Set<string>();
    set.add(c.attribute ?? "");
    conflicted.set(c.ref, set);
  }
  const links = data ? [...data.links.added.map((l) => ["added", l.ref] as const), ...data.links.removed.map((l) => ["removed", l.ref] as const), ...data.links.changed.map((l) => ["changed", l.ref] as const)] : [];
  return (
    <Paper withBorder p="sm" data-testid="proposal-diff">
      <Title order={5} mb="xs">
        Changes
      </Title>
      <ProblemAlert error={range.error ?? diff.error} title="The changes cannot be read" />
      {loading && <Text size="sm" c="dimmed">Reading the changes…</Text>}
      {!loading && data === null && <Text size="sm" c="dimmed">No changes to show (the source branch has no Revision of its own, or is gone).</Text>}
      {data && (
        <Stack gap="sm">
          <Text size="xs" c="dimmed">
            {data.branch}: {shortRevision(data.from)} → {shortRevision(data.to)}
          </Text>
          {recordDiffs(data).map((record) => (
            <div key={record.ref} data-testid="diff-record" data-conflict={conflicted.has(record.ref) ? "open" : undefined}>
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
              <BeforeAfterTable
                rows={record.rows}
                labels={{ before: open ? "Base" : "Before", after: open ? "Source" : "After" }}
                review={
                  open && target.data && (record.change === "added" || target.data.has(record.ref))
                    ? { target: target.data.get(record.ref) ?? null, conflicts: conflicted.get(record.ref) ?? new Set() }
                    : undefined
                }
              />
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

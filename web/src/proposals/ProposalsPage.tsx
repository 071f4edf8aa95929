/** The Proposals of a Domain, filtered by state and by "assigned to me" (those the caller stewards).
 * The filters ride in the URL. */
import { Anchor, Badge, Checkbox, Group, SegmentedControl, Stack, Table, Text } from "@mantine/core";
import { Link, useSearchParams } from "react-router";
import { listProposals, type ProposalFilter } from "../api/proposals";
import { ProblemAlert } from "../shell/ProblemAlert";
import { formatTime } from "../shell/format";
import { domainPath, useReadPoint } from "../shell/readPoint";
import { useApi } from "../shell/useApi";
import { usePageTitle } from "../shell/title";

const STATES = ["open", "merged", "closed", "all"] as const;

export const STATUS_COLORS: Record<string, string> = { open: "blue", merged: "green", closed: "gray" };

export function ProposalsPage() {
  const { domain, branch, at } = useReadPoint();
  usePageTitle("Proposals", domain);
  const [params, setParams] = useSearchParams();
  const status = (STATES as readonly string[]).includes(params.get("status") ?? "") ? (params.get("status") as ProposalFilter["status"]) : "open";
  const assigned = params.get("assigned") === "me";
  const list = useApi(() => listProposals(domain, { status, assigned }), [domain, status, assigned]);

  const setFilter = (name: string, value: string) =>
    setParams((current) => {
      const next = new URLSearchParams(current);
      if (value) next.set(name, value);
      else next.delete(name);
      return next;
    });

  return (
    <Stack gap="sm">
      <Group>
        <SegmentedControl value={status} onChange={(v) => setFilter("status", v)} data={[...STATES]} data-testid="proposal-status" />
        <Checkbox label="Assigned to me" checked={assigned} onChange={(e) => setFilter("assigned", e.currentTarget.checked ? "me" : "")} />
      </Group>
      <ProblemAlert error={list.error} />
      {list.data && list.data.proposals.length === 0 && <Text c="dimmed">No Proposals.</Text>}
      {list.data && list.data.proposals.length > 0 && (
        <Table striped withTableBorder data-testid="proposals">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Proposal</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th>Author</Table.Th>
              <Table.Th>Branches</Table.Th>
              <Table.Th>Kinds</Table.Th>
              <Table.Th>Approvals</Table.Th>
              <Table.Th>Blockers</Table.Th>
              <Table.Th>Opened</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data.proposals.map((p) => (
              <Table.Tr key={p.id}>
                <Table.Td>
                  <Anchor component={Link} to={domainPath(domain, `proposals/${encodeURIComponent(p.id)}`, { branch, at })}>
                    {p.title}
                  </Anchor>
                </Table.Td>
                <Table.Td>
                  <Badge color={STATUS_COLORS[p.status]}>{p.status}</Badge>
                </Table.Td>
                <Table.Td>{p.author}</Table.Td>
                <Table.Td>
                  {p.source_ref} → {p.target_ref}
                </Table.Td>
                <Table.Td>{p.kinds.join(", ")}</Table.Td>
                <Table.Td>
                  {p.approval.approvals} of {p.approval.required}
                </Table.Td>
                <Table.Td>{p.status === "open" ? p.merge.blockers.join(", ") || "none" : ""}</Table.Td>
                <Table.Td>{formatTime(p.created_at)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}

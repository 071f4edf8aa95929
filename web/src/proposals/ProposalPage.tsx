/**
 * One Proposal: what it is, where it stands (approvals, blockers and the API's `next` hints), what
 * it changes Record by Record, its Conflicts with a resolution form, its reviews, and the actions
 * (review, merge, close). Each action's answer replaces the Proposal shown; a refusal shows the
 * API's problem (which names the blocker and what to do).
 */
import { Alert, Anchor, Badge, Button, Grid, Group, List, Paper, Stack, Text, Title } from "@mantine/core";
import { useState } from "react";
import { Link, useParams } from "react-router";
import { listSessions } from "../replay/api";
import { closeProposal, getProposal, listConflicts, mergeProposal, resolveConflict, reviewProposal, type Resolution } from "../api/proposals";
import type { Conflict, Proposal } from "../api/types";
import { Markdown } from "../shell/Markdown";
import { ProblemAlert } from "../shell/ProblemAlert";
import { useSession } from "../shell/auth";
import { formatTime, shortRevision } from "../shell/format";
import { useReadPoint } from "../shell/readPoint";
import { useApi } from "../shell/useApi";
import { SchemaChangesPanel } from "../diff/SchemaChangesPanel";
import { ConflictsPanel } from "./ConflictsPanel";
import { ProposalDiffPanel } from "./ProposalDiffPanel";
import { proposalRange } from "./proposalDiff";
import { STATUS_COLORS } from "./ProposalsPage";
import { ReviewForm } from "./ReviewForm";
import { usePageTitle } from "../shell/title";

/** Why a Proposal cannot merge, one sentence per blocker the API names. */
export function blockerReasons(p: Pick<Proposal, "merge" | "approval" | "conflicts">): string[] {
  const reasons = p.merge.blockers.map((blocker) => {
    switch (blocker) {
      case "approvals-pending":
        return `Merge is blocked: it needs ${p.approval.required} approval${p.approval.required === 1 ? "" : "s"} and has ${p.approval.approvals}.`;
      case "review-policy-needs-approval":
        return "Merge is blocked: the Operation's review policy asks for an approval first.";
      case "changes-requested":
        return "Merge is blocked: a reviewer requested changes.";
      case "open-conflicts":
        return `Merge is blocked: ${p.conflicts.open} Conflict${p.conflicts.open === 1 ? " is" : "s are"} open; resolve ${p.conflicts.open === 1 ? "it" : "them"} below.`;
      default:
        return `Merge is blocked: ${blocker}.`;
    }
  });
  return reasons.length > 0 ? reasons : ["Merge is blocked until the next merge check."];
}

export function ProposalPage() {
  const { domain } = useReadPoint();
  const { id = "" } = useParams();
  const session = useSession();
  const proposal = useApi(() => getProposal(domain, id), [domain, id]);
  const conflicts = useApi(() => listConflicts(domain, id), [domain, id]);
  // The agent sessions that opened or added to it (only those the reader may read: its own, or all for the admin).
  const sessions = useApi(() => listSessions({ proposal: id, limit: 5 }), [id]);
  const loaded = proposal.data;
  // The Revisions it brings: read once for its diff and its schema changes.
  const range = useApi(loaded ? () => proposalRange(domain, loaded) : null, [domain, id, loaded?.status, loaded?.updated_at]);
  usePageTitle(proposal.data?.title ?? "Proposal", domain);
  const [actionError, setActionError] = useState<unknown>(null);
  const [busy, setBusy] = useState<string | null>(null);

  /** Run an action; on success show its answer, on refusal its problem. */
  const act = async (name: string, call: () => Promise<Proposal | Conflict>): Promise<boolean> => {
    setBusy(name);
    setActionError(null);
    try {
      const answer = await call();
      if ("approval" in answer) proposal.setData(() => answer);
      else proposal.reload();
      conflicts.reload();
      return true;
    } catch (problem) {
      setActionError(problem);
      proposal.reload();
      conflicts.reload();
      return false;
    } finally {
      setBusy(null);
    }
  };

  const p = proposal.data;
  return (
    <Stack gap="md" data-testid="proposal-page">
      <ProblemAlert error={proposal.error} />
      {p && (
        <>
          <Paper withBorder p="md">
            <Group justify="space-between" align="flex-start">
              <div>
                <Title order={2} size="h3" data-testid="proposal-title">
                  {p.title}
                </Title>
                <Text size="sm" c="dimmed">
                  {p.id} · by {p.author} · {p.source_ref} → {p.target_ref} · opened {formatTime(p.created_at)}
                </Text>
              </div>
              <Badge size="lg" color={STATUS_COLORS[p.status]} data-testid="proposal-status-badge">
                {p.status}
              </Badge>
            </Group>
            {p.description && (
              <div style={{ marginTop: "var(--mantine-spacing-sm)" }}>
                <Markdown text={p.description} testId="proposal-description" />
              </div>
            )}
            {(sessions.data?.sessions.length ?? 0) > 0 && (
              <Group gap="xs" mt={4} data-testid="proposal-sessions">
                <Text size="sm">Made in agent session</Text>
                {sessions.data?.sessions.map((s) => (
                  <Anchor key={s.session} component={Link} size="sm" to={`/sessions/${encodeURIComponent(s.session)}`}>
                    {s.session}
                  </Anchor>
                ))}
              </Group>
            )}
            {p.task && <Text size="sm" mt={4}>Task: {p.task}</Text>}
            {p.intent && <Text size="sm">Intent: {p.intent}</Text>}
            <Group gap="xs" mt="sm">
              <Text size="sm">Kinds: {p.kinds.join(", ") || "none"}</Text>
              <Text size="sm">· Stewards: {p.stewards.join(", ") || "none"}</Text>
              <Text size="sm">
                · Approvals: {p.approval.approvals} of {p.approval.required}
              </Text>
              <Text size="sm">
                · Conflicts: {p.conflicts.open} open, {p.conflicts.resolved} resolved
              </Text>
            </Group>
            {p.status === "merged" && (
              <Text size="sm" mt={4} c="#1e6f30">
                Merged as {shortRevision(p.merged_revision)} by {p.merged_by} at {formatTime(p.merged_at)}
              </Text>
            )}
            {p.status === "closed" && (
              <Text size="sm" mt={4} c="dimmed">
                Closed by {p.closed_by} at {formatTime(p.closed_at)}
              </Text>
            )}
          </Paper>

          {p.status === "open" && (
            <Alert color={p.merge.mergeable ? "green" : "yellow"} title={p.merge.mergeable ? "Ready to merge" : "Not mergeable yet"} data-testid="blockers">
              {p.merge.blockers.length > 0 && (
                <Group gap={4} mb="xs">
                  {p.merge.blockers.map((b) => (
                    <Badge key={b} color="yellow" variant="light">
                      {b}
                    </Badge>
                  ))}
                </Group>
              )}
              <List size="sm" data-testid="next-steps">
                {p.next.map((n, i) => (
                  <List.Item key={i}>
                    <b>{n.action}</b>: {n.detail}
                    {n.permission ? ` (needs ${n.permission})` : ""}
                  </List.Item>
                ))}
              </List>
            </Alert>
          )}

          {p.status !== "open" && <ProblemAlert error={actionError} />}

          <Grid gap="md">
            <Grid.Col span={{ base: 12, lg: 7 }}>
              <Stack gap="md">
                <SchemaChangesPanel domain={domain} range={range.data ?? null} target={p.status === "open" ? p.target_ref : undefined} />
                <ProposalDiffPanel domain={domain} proposal={p} range={range} conflicts={conflicts.data?.conflicts} />
                <ProblemAlert error={conflicts.error} />
                {conflicts.data && (
                  <ConflictsPanel
                    conflicts={conflicts.data.conflicts}
                    readOnly={p.status !== "open"}
                    onResolve={(c, r: Resolution) => act("resolve", () => resolveConflict(domain, p.id, c.id, r))}
                  />
                )}
              </Stack>
            </Grid.Col>
            <Grid.Col span={{ base: 12, lg: 5 }}>
              <Stack gap="md">
                {p.status === "open" && (
                  <>
                    <ReviewForm disabled={busy !== null} canApprove={session.principal !== p.author} onReview={(decision, comment) => act("review", () => reviewProposal(domain, p.id, decision, comment))} />
                    <Paper withBorder p="sm">
                      <Group>
                        <Button
                          onClick={() => act("merge", () => mergeProposal(domain, p.id))}
                          loading={busy === "merge"}
                          disabled={busy !== null || !p.merge.mergeable}
                          aria-describedby={p.merge.mergeable ? undefined : "merge-reasons"}
                          data-testid="merge"
                        >
                          Merge
                        </Button>
                        <Button variant="default" color="red" onClick={() => act("close", () => closeProposal(domain, p.id))} loading={busy === "close"} disabled={busy !== null}>
                          Close without merging
                        </Button>
                      </Group>
                      {!p.merge.mergeable && (
                        <List size="sm" mt="xs" id="merge-reasons" data-testid="merge-reasons">
                          {blockerReasons(p).map((reason) => (
                            <List.Item key={reason}>{reason}</List.Item>
                          ))}
                        </List>
                      )}
                      <Text size="xs" c="dimmed" mt={4}>
                        A merge with Conflicts records them here; resolve them and merge again.
                      </Text>
                      <ProblemAlert error={actionError} />
                    </Paper>
                  </>
                )}
                <Paper withBorder p="sm" data-testid="reviews">
                  <Title order={5} mb="xs">
                    Reviews
                  </Title>
                  {p.reviews.length === 0 && <Text size="sm" c="dimmed">No reviews yet.</Text>}
                  <Stack gap={6}>
                    {p.reviews.map((r, i) => (
                      <div key={i}>
                        <Group gap="xs">
                          <Badge size="sm" color={r.decision === "approve" ? "green" : "orange"}>
                            {r.decision === "approve" ? "approved" : "changes requested"}
                          </Badge>
                          <Text size="sm">
                            {r.reviewer}, {formatTime(r.at)}
                          </Text>
                        </Group>
                        {r.comment && <Text size="sm">{r.comment}</Text>}
                      </div>
                    ))}
                  </Stack>
                </Paper>
              </Stack>
            </Grid.Col>
          </Grid>
        </>
      )}
    </Stack>
  );
}

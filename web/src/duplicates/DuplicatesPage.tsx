/**
 * `/d/:domain/duplicates`: the reconciliation candidates, pairs of Records likely to be the same
 * thing (docs/reconciliation.md), with their evidence and score, filtered by state and Kind and
 * paged; and one candidate (`?candidate=`) with both Records side by side, accepted with the
 * survivor chosen (the other is merged into it), or dismissed with a reason.
 */
import { Alert, Anchor, Badge, Button, Grid, Group, Paper, Radio, SegmentedControl, Stack, Table, Text, TextInput, Textarea, Title } from "@mantine/core";
import { useState } from "react";
import { Link, useSearchParams } from "react-router";
import {
  acceptCandidate,
  dismissCandidate,
  getCandidate,
  listCandidates,
  scanCandidates,
  type CandidateAccepted,
  type CandidateDoc,
  type CandidateFilter,
} from "../api/reconciliation";
import { ProblemAlert } from "../shell/ProblemAlert";
import { formatValue, splitRef } from "../shell/format";
import { recordPath, useReadPoint } from "../shell/readPoint";
import { usePageTitle } from "../shell/title";
import { useApi } from "../shell/useApi";

const STATES = ["open", "accepted", "dismissed", "all"] as const;

function RecordLink({ domain, reference }: { domain: string; reference: string }) {
  const parts = splitRef(reference);
  if (!parts) return <Text span ff="monospace" size="sm">{reference}</Text>;
  return (
    <Anchor component={Link} to={recordPath(domain, parts.kind, parts.key, { branch: "", at: "" })} ff="monospace" size="sm">
      {reference}
    </Anchor>
  );
}

function Evidence({ candidate }: { candidate: CandidateDoc }) {
  return (
    <Stack gap={2}>
      {candidate.evidence.map((e, i) => (
        <Text key={i} size="xs">
          <Badge size="xs" variant="light" mr={4}>
            {e.rule.replace("_", " ")}
          </Badge>
          {e.attribute}: {e.values.map((v) => formatValue(v)).join(" ≈ ")}
          {e.similarity !== undefined ? ` (${Math.round(e.similarity * 100)}% similar)` : ""}
        </Text>
      ))}
    </Stack>
  );
}

export function DuplicatesPage() {
  const { domain } = useReadPoint();

  const [params, setParams] = useSearchParams();
  const status = (STATES as readonly string[]).includes(params.get("status") ?? "") ? (params.get("status") as CandidateFilter["status"]) : "open";
  const kind = params.get("kind") ?? "";
  const chosen = params.get("candidate") ?? "";
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const [scan, setScan] = useState<{ busy: boolean; error: unknown; note: string }>({ busy: false, error: null, note: "" });
  usePageTitle("Duplicates", domain);
  const list = useApi(() => listCandidates(domain, { status, kind, cursor }), [domain, status, kind, cursor]);
  const set = (name: string, value: string) =>
    setParams((current) => {
      const next = new URLSearchParams(current);
      if (value) next.set(name, value);
      else next.delete(name);
      if (name !== "candidate") next.delete("candidate");
      return next;
    });
  const kinds = [...new Set((list.data?.candidates ?? []).map((c) => c.kind))].sort();


  return (
    <Stack gap="md" data-testid="duplicates-page">
      <Group justify="space-between" align="flex-end">
        <Title order={2} size="h3">
          Duplicate candidates
        </Title>
        <Button
          variant="default"
          size="xs"
          loading={scan.busy}
          onClick={async () => {
            setScan({ busy: true, error: null, note: "" });
            try {
              const answer = await scanCandidates(domain);
              setScan({ busy: false, error: null, note: `Scanned: ${answer.candidates} candidates (${answer.dropped} dropped).` });
              list.reload();
            } catch (error) {
              setScan({ busy: false, error, note: "" });
            }
          }}
        >
          Scan now
        </Button>
      </Group>
      <Text size="sm" c="dimmed">
        Pairs of Records of one Kind the reconciliation scan found likely to be the same thing, with the rules that matched. Accept one to merge the other into it, or
        dismiss it with a reason (the pair is not proposed again).
      </Text>
      {scan.note && <Text size="sm">{scan.note}</Text>}
      <ProblemAlert error={scan.error} />
      <Group>
        <SegmentedControl
          aria-label="State"
          data={STATES.map((s) => ({ value: s, label: s }))}
          value={status}
          onChange={(value) => {
            setCursor(undefined);
            set("status", value === "open" ? "" : value);
          }}
        />
        <TextInput
          aria-label="Kind"
          placeholder="Kind (all)"
          defaultValue={kind}
          w={200}
          onKeyDown={(e) => e.key === "Enter" && set("kind", e.currentTarget.value.trim())}
          onBlur={(e) => e.currentTarget.value.trim() !== kind && set("kind", e.currentTarget.value.trim())}
        />
        {kinds.length > 0 && !kind && (
          <Text size="xs" c="dimmed">
            on this page: {kinds.join(", ")}
          </Text>
        )}
      </Group>
      <ProblemAlert error={list.error} />
      <Grid>
        <Grid.Col span={{ base: 12, lg: chosen ? 6 : 12 }}>
          {list.data && list.data.candidates.length === 0 && <Text c="dimmed">No {status === "all" ? "" : status} candidates.</Text>}
          {list.data && list.data.candidates.length > 0 && (
            <Table striped highlightOnHover data-testid="candidates">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Candidate</Table.Th>
                  <Table.Th>Records</Table.Th>
                  <Table.Th>Evidence</Table.Th>
                  <Table.Th>Score</Table.Th>
                  <Table.Th>State</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.data.candidates.map((c) => (
                  <Table.Tr key={c.id} data-candidate={c.id} bg={c.id === chosen ? "indigo.0" : undefined}>
                    <Table.Td>
                      <Anchor component="button" type="button" size="sm" ff="monospace" onClick={() => set("candidate", c.id)}>
                        {c.id}
                      </Anchor>
                    </Table.Td>
                    <Table.Td>
                      <Stack gap={0}>
                        <RecordLink domain={domain} reference={c.record_a} />
                        <RecordLink domain={domain} reference={c.record_b} />
                      </Stack>
                    </Table.Td>
                    <Table.Td>
                      <Evidence candidate={c} />
                    </Table.Td>
                    <Table.Td>{c.score.toFixed(2)}</Table.Td>
                    <Table.Td>
                      <Badge size="sm" variant="light" color={c.status === "open" ? "blue" : c.status === "accepted" ? "green" : "gray"}>
                        {c.status}
                      </Badge>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )}
          <Group mt="xs">
            {cursor && (
              <Button size="xs" variant="default" onClick={() => setCursor(undefined)}>
                First page
              </Button>
            )}
            {list.data?.next_cursor && (
              <Button size="xs" variant="default" onClick={() => setCursor(list.data?.next_cursor ?? undefined)}>
                Next page
              </Button>
            )}
          </Group>
        </Grid.Col>
        {chosen && (
          <Grid.Col span={{ base: 12, lg: 6 }}>
            <CandidatePanel key={chosen} domain={domain} id={chosen} onDecided={() => list.reload()} />
          </Grid.Col>
        )}
      </Grid>
    </Stack>
  );
}

function CandidatePanel({ domain, id, onDecided }: { domain: string; id: string; onDecided: () => void }) {
  const candidate = useApi(() => getCandidate(domain, id), [domain, id]);
  const [keep, setKeep] = useState("");
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState<"" | "accept" | "dismiss">("");
  const [error, setError] = useState<unknown>(null);
  const [accepted, setAccepted] = useState<CandidateAccepted | null>(null);
  const c = candidate.data;
  const records = c?.records ?? [];
  const names = [...new Set(records.flatMap((r) => Object.keys(r.values ?? {})))].sort();

  const decide = async (action: "accept" | "dismiss") => {
    if (!c) return;
    setBusy(action);
    setError(null);
    try {
      if (action === "accept") setAccepted(await acceptCandidate(domain, c.id, keep, reason));
      else await dismissCandidate(domain, c.id, reason);
      candidate.reload();
      onDecided();
    } catch (problem) {
      setError(problem);
    } finally {
      setBusy("");
    }
  };

  return (
    <Paper withBorder p="md" data-testid="candidate">
      <ProblemAlert error={candidate.error} />
      {c && (
        <Stack gap="sm">
          <Group justify="space-between">
            <Title order={3} size="h5" ff="monospace">
              {c.id}
            </Title>
            <Badge variant="light">{c.status}</Badge>
          </Group>
          <Evidence candidate={c} />
          <Table withTableBorder fz="sm" data-testid="candidate-records">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Attribute</Table.Th>
                {records.map((r) => (
                  <Table.Th key={r.ref}>
                    <RecordLink domain={domain} reference={r.ref} />
                  </Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {names.map((name) => {
                const values = records.map((r) => r.values?.[name] ?? null);
                const differ = JSON.stringify(values[0]) !== JSON.stringify(values[1]);
                return (
                  <Table.Tr key={name}>
                    <Table.Td ff="monospace">{name}</Table.Td>
                    {values.map((v, i) => (
                      <Table.Td key={i} fw={differ ? 600 : undefined}>
                        {formatValue(v)}
                      </Table.Td>
                    ))}
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
          {records.some((r) => r.values === null) && <Text size="sm" c="dimmed">A Record deleted since has no values.</Text>}
          {c.status === "open" && (
            <>
              <Radio.Group label="Keep (the survivor; the other is merged into it and deleted)" value={keep} onChange={setKeep} data-testid="keep">
                <Group mt={4}>
                  {records.map((r) => (
                    <Radio key={r.key} value={r.key} label={r.ref} />
                  ))}
                </Group>
              </Radio.Group>
              <Textarea label="Reason" description="Kept with the decision and in the audit log; required to dismiss" value={reason} onChange={(e) => setReason(e.currentTarget.value)} autosize minRows={2} />
              <Group>
                <Button onClick={() => decide("accept")} disabled={!keep || busy !== ""} loading={busy === "accept"} data-testid="accept">
                  Merge into the survivor
                </Button>
                <Button variant="default" onClick={() => decide("dismiss")} disabled={!reason.trim() || busy !== ""} loading={busy === "dismiss"} data-testid="dismiss">
                  Not the same: dismiss
                </Button>
              </Group>
            </>
          )}
          <ProblemAlert error={error} />
          {accepted && (
            <Alert color="green" title={accepted.status === "merged" ? "Merged" : "Proposed"} data-testid="accepted">
              {accepted.removed} merged into {accepted.kept}
              {accepted.filled.length ? `; filled ${accepted.filled.join(", ")}` : ""}
              {accepted.conflicts.length ? `; kept the survivor's ${accepted.conflicts.map((x) => x.attribute).join(", ")}` : ""}
              {accepted.moved_links ? `; ${accepted.moved_links} Links moved` : ""}.
              {accepted.proposal && (
                <>
                  {" "}
                  <Anchor component={Link} to={`/d/${encodeURIComponent(domain)}/proposals/${encodeURIComponent(accepted.proposal.id)}`}>
                    Proposal {accepted.proposal.id}
                  </Anchor>
                </>
              )}
            </Alert>
          )}
          {c.status !== "open" && (
            <Text size="sm" data-testid="decision">
              {c.status} by {c.decided_by}
              {c.reason ? `: ${c.reason}` : ""}
            </Text>
          )}
        </Stack>
      )}
    </Paper>
  );
}

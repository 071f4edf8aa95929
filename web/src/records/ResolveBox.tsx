/**
 * "Type words": the text goes to resolve, and each candidate becomes a button. A value candidate
 * (a predicate such as severity = high) adds a condition (switching to its Kind when needed); a Kind
 * candidate picks the Kind. What resolve did not understand is said too.
 */
import { Badge, Button, Group, Paper, Stack, Text, TextInput } from "@mantine/core";
import { useState, type FormEvent } from "react";
import { resolveWords, type ReadPointQuery } from "../api/records";
import type { Candidate, ResolveResult } from "../api/types";
import { ProblemAlert } from "../shell/ProblemAlert";

interface Props {
  domain: string;
  point: ReadPointQuery;
  onCandidate: (candidate: Candidate) => void;
}

export function candidateLabel(candidate: Candidate): string {
  if (candidate.predicate) {
    const value = Array.isArray(candidate.predicate.value)
      ? candidate.predicate.value.join(", ")
      : String(candidate.predicate.value ?? "");
    return `${candidate.kind ?? ""}.${candidate.predicate.attr} ${candidate.predicate.op} ${value}`;
  }
  if (candidate.target === "kind") return `Kind ${candidate.kind ?? ""}`;
  return `${candidate.target} ${candidate.kind ?? ""}${candidate.attribute ? `.${candidate.attribute}` : ""}`;
}

export function ResolveBox({ domain, point, onCandidate }: Props) {
  const [text, setText] = useState("");
  const [answer, setAnswer] = useState<ResolveResult | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      setAnswer(await resolveWords(domain, text, point));
    } catch (problem) {
      setError(problem);
      setAnswer(null);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Paper withBorder p="sm" data-testid="resolve-box">
      <form onSubmit={submit}>
        <Group align="flex-end">
          <TextInput
            label="Type words"
            description="Resolve turns words into Kinds and filters (e.g. “high severity flags”)"
            value={text}
            onChange={(e) => setText(e.currentTarget.value)}
            style={{ flex: 1 }}
            data-testid="resolve-input"
          />
          <Button type="submit" loading={busy} disabled={!text.trim()} data-testid="resolve-submit">
            Resolve
          </Button>
        </Group>
      </form>
      <ProblemAlert error={error} />
      {answer && (
        <Stack gap={6} mt="sm">
          {answer.candidates.length === 0 && <Text size="sm">No candidates.</Text>}
          <Group gap="xs">
            {answer.candidates.map((candidate, i) => (
              <Button
                key={i}
                size="compact-sm"
                variant="light"
                onClick={() => onCandidate(candidate)}
                data-testid="resolve-candidate"
                title={`${candidate.level}, score ${candidate.score}, matched “${candidate.matched}”`}
              >
                {candidateLabel(candidate)}
                {candidate.records !== undefined && (
                  <Badge size="xs" ml={6} variant="white">
                    {candidate.records}
                  </Badge>
                )}
              </Button>
            ))}
          </Group>
          {answer.unmatched.length > 0 && (
            <Text size="xs" c="dimmed">
              Not understood: {answer.unmatched.join(", ")}
            </Text>
          )}
          {(answer.coverage?.notes ?? []).map((note, i) => (
            <Text key={i} size="xs" c="dimmed">
              {note}
            </Text>
          ))}
        </Stack>
      )}
    </Paper>
  );
}

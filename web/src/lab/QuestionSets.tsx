/**
 * The lab's saved question sets (questionSets.ts): pick or write a set (one question a line with its
 * expected Records), save it in this browser, and score every configuration on it: per question the
 * rank of the first expected Record in the configuration's search (or a miss), per configuration
 * hit@k. A configuration without a limit is searched with limit k, so it has k chances.
 */
import { Alert, Button, Group, NativeSelect, NumberInput, Paper, Table, Text, TextInput, Textarea, Title } from "@mantine/core";
import { useState } from "react";
import { searchFor } from "./api";
import { labelOf, type LabConfig } from "./config";
import { deleteSet, formatQuestions, hitAtK, hitRank, loadSets, parseQuestions, saveSet, type Question, type QuestionSet } from "./questionSets";

interface Scores {
  questions: Question[];
  k: number;
  labels: string[];
  /** `ranks[q][c]`: the rank in configuration c's search for question q; null a miss; undefined failed. */
  ranks: Array<Array<number | null | undefined>>;
  problems: string[];
}

export function QuestionSets({ domain, branch, configs }: { domain: string; branch?: string; configs: LabConfig[] }) {
  const [sets, setSets] = useState<QuestionSet[]>(() => loadSets(domain, window.localStorage));
  const [name, setName] = useState("");
  const [k, setK] = useState(5);
  const [text, setText] = useState("");
  const [scores, setScores] = useState<Scores | null>(null);
  const [scoring, setScoring] = useState(false);
  const parsed = parseQuestions(text);

  const pick = (picked: string) => {
    const set = sets.find((s) => s.name === picked);
    setName(picked);
    if (set) {
      setK(set.k);
      setText(formatQuestions(set.questions));
    }
  };

  const score = async () => {
    setScoring(true);
    const problems: string[] = [];
    const ranks: Scores["ranks"] = [];
    for (const question of parsed.questions) {
      ranks.push(
        await Promise.all(
          configs.map(async (config, c) => {
            const answer = await searchFor(domain, question.text, { ...config, limit: config.limit ?? k }, branch);
            if (!answer.ok) {
              problems.push(`${labelOf(config, c)} on "${question.text}": ${answer.problem.title}`);
              return undefined;
            }
            return hitRank(answer.value.results.map((hit) => hit.ref), question.expected, k);
          }),
        ),
      );
    }
    setScores({ questions: parsed.questions, k, labels: configs.map(labelOf), ranks, problems });
    setScoring(false);
  };

  return (
    <Paper withBorder p="sm" data-testid="lab-question-sets">
      <Title order={3} size="h4">
        Question sets
      </Title>
      <Text size="sm" c="dimmed">
        Questions with the Records a good answer holds, scored with hit@k on each configuration's search. Saved in this
        browser only (localStorage), per Domain.
      </Text>
      <Group align="flex-end" mt="xs">
        <NativeSelect
          label="Saved sets"
          data={[{ value: "", label: sets.length ? "a new set" : "none saved yet" }, ...sets.map((s) => ({ value: s.name, label: s.name }))]}
          value={sets.some((s) => s.name === name) ? name : ""}
          onChange={(e) => pick(e.currentTarget.value)}
          w={220}
        />
        <TextInput label="Set name" value={name} onChange={(e) => setName(e.currentTarget.value)} w={220} />
        <NumberInput label="k" min={1} max={100} value={k} onChange={(v) => setK(typeof v === "number" && v >= 1 ? Math.trunc(v) : 5)} w={90} />
        <Button
          variant="default"
          disabled={!name.trim() || parsed.questions.length === 0 || parsed.errors.length > 0}
          onClick={() => setSets(saveSet(domain, window.localStorage, { name: name.trim(), k, questions: parsed.questions }))}
        >
          Save set
        </Button>
        <Button
          variant="subtle"
          color="red"
          disabled={!sets.some((s) => s.name === name)}
          onClick={() => {
            setSets(deleteSet(domain, window.localStorage, name));
            setName("");
          }}
        >
          Delete set
        </Button>
      </Group>
      <Textarea
        mt="xs"
        label="Questions, one a line: question | Kind/key, Kind/key"
        autosize
        minRows={3}
        value={text}
        onChange={(e) => setText(e.currentTarget.value)}
        error={parsed.errors.length ? parsed.errors.join("; ") : undefined}
        data-testid="lab-questions"
      />
      <Group mt="xs">
        <Button onClick={() => void score()} loading={scoring} disabled={parsed.questions.length === 0 || parsed.errors.length > 0}>
          Score the configurations
        </Button>
      </Group>
      {scores && <ScoreTable scores={scores} />}
    </Paper>
  );
}

function ScoreTable({ scores }: { scores: Scores }) {
  return (
    <>
      {scores.problems.length > 0 && (
        <Alert color="orange" mt="xs" title="Some searches were refused (left out of the score)">
          {scores.problems.join("; ")}
        </Alert>
      )}
      <Table mt="xs" fz="sm" withTableBorder data-testid="lab-scores">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Question</Table.Th>
            {scores.labels.map((label) => (
              <Table.Th key={label}>{label}</Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {scores.questions.map((question, q) => (
            <Table.Tr key={q}>
              <Table.Td>
                {question.text}
                <Text size="xs" c="dimmed" ff="monospace">
                  {question.expected.join(", ")}
                </Text>
              </Table.Td>
              {scores.labels.map((label, c) => {
                const rank = scores.ranks[q]?.[c];
                return (
                  <Table.Td key={label} data-rank={rank ?? "miss"}>
                    {rank === undefined ? "refused" : rank === null ? `miss (not in the first ${scores.k})` : `found at ${rank}`}
                  </Table.Td>
                );
              })}
            </Table.Tr>
          ))}
        </Table.Tbody>
        <Table.Tfoot>
          <Table.Tr>
            <Table.Th>hit@{scores.k}</Table.Th>
            {scores.labels.map((label, c) => {
              const { hits, scored, rate } = hitAtK(scores.ranks.map((row) => row[c]));
              return (
                <Table.Th key={label} data-testid={`hit-at-k-${c}`}>
                  {hits}/{scored} {rate === null ? "" : `(${Math.round(rate * 100)}%)`}
                </Table.Th>
              );
            })}
          </Table.Tr>
        </Table.Tfoot>
      </Table>
    </>
  );
}

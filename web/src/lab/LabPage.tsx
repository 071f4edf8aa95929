/**
 * `/app/d/:domain/lab`: the retrieval lab. A question and two to four configurations side by side;
 * "Compare" runs each configuration's resolve, search and context pack and highlights what one finds
 * and another misses. Below, saved question sets score every configuration with hit@k
 * (QuestionSets.tsx; kept in this browser's localStorage).
 *
 * The comparison is restored from the URL when the page opens (urlState.ts), and every edit rewrites
 * the query (replacing the history entry), so the address bar is always a shareable link; opening a
 * link with a question runs the comparison at once. The branch is the shell's `?branch=` like on every
 * Domain page. Edits go to React state first (queued updates, so two quick edits of different fields
 * both stay: the router's `setSearchParams` would apply both to the same old query), then to the URL.
 */

import { Alert, Button, Group, List, SimpleGrid, Stack, Text, TextInput, Title } from "@mantine/core";
import { useEffect, useMemo, useRef, useState } from "react";
import { useSearchParams } from "react-router";
import { ProblemAlert } from "../shell/ProblemAlert";
import { useApi } from "../shell/useApi";
import { useReadPoint } from "../shell/readPoint";
import { runConfig, schemaNames } from "./api";
import { compareRuns } from "./compare";
import { emptyConfig, MAX_CONFIGS, MIN_CONFIGS, type LabConfig, type LabState } from "./config";
import { ConfigEditor } from "./ConfigEditor";
import { LabResults } from "./LabResults";
import { QuestionSets } from "./QuestionSets";
import type { LabRun } from "./types";
import { decodeLabState, encodeLabState } from "./urlState";
import { usePageTitle } from "../shell/title";

export function LabPage() {
  const { domain, branch } = useReadPoint();
  usePageTitle("Retrieval lab", domain);
  const [params, setParams] = useSearchParams();
  const [{ state: restored, warnings }] = useState(() => decodeLabState(params));
  const [state, setState] = useState<LabState>(restored);
  const names = useApi(() => schemaNames(domain, branch || undefined), [domain, branch]);
  const [runs, setRuns] = useState<(LabRun | null)[]>([]);
  const [ranFor, setRanFor] = useState<LabState | null>(null);
  const [running, setRunning] = useState(false);
  const generation = useRef(0);

  // The address bar follows the state (and keeps the other members: branch, at).
  useEffect(() => {
    const next = encodeLabState(state, params);
    if (next.toString() !== params.toString()) setParams(next, { replace: true });
  }, [state, params, setParams]);

  const setConfig = (i: number, change: Partial<LabConfig>) =>
    setState((s) => ({ ...s, configs: s.configs.map((c, j) => (j === i ? { ...c, ...change } : c)) }));

  const compare = async (target: LabState) => {
    if (!target.question.trim()) return;
    const round = ++generation.current;
    setRunning(true);
    const answers = await Promise.all(
      target.configs.map((config) => runConfig(domain, target.question, config, branch || undefined)),
    );
    if (round !== generation.current) return;
    setRuns(answers);
    setRanFor(target);
    setRunning(false);
  };

  // A shared link with a question restores the comparison: run it on arrival, and again on the
  // new branch when the branch changes.
  const latest = useRef(state);
  latest.current = state;
  useEffect(() => {
    if (latest.current.question.trim()) void compare(latest.current);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [domain, branch]);

  const comparison = useMemo(() => compareRuns(runs), [runs]);
  const stale = ranFor !== null && JSON.stringify(ranFor) !== JSON.stringify(state);

  return (
    <Stack gap="sm">
      <Title order={2}>Retrieval lab</Title>
      <Text size="sm" c="dimmed">
        Ask one question with several configurations: each runs resolve, search and a context pack seeded by the
        search. The address bar holds the whole comparison: share it to show someone the same thing.
      </Text>
      {warnings.length > 0 && (
        <Alert color="orange" title="Parts of this link were ignored">
          <List size="sm">
            {warnings.map((w) => (
              <List.Item key={w}>{w}</List.Item>
            ))}
          </List>
        </Alert>
      )}
      <ProblemAlert error={names.error} title="The schema could not be read" />
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void compare(state);
        }}
      >
        <Group align="end">
          <TextInput
            style={{ flex: 1 }}
            label="Question"
            placeholder="words an agent or a person would use, e.g. seals from risky suppliers"
            value={state.question}
            onChange={(e) => {
              const question = e.currentTarget.value;
              setState((s) => ({ ...s, question }));
            }}
            data-testid="lab-question"
          />
          <Button type="submit" loading={running} disabled={!state.question.trim()}>
            Compare
          </Button>
          <Button
            variant="default"
            disabled={state.configs.length >= MAX_CONFIGS}
            onClick={() => setState((s) => ({ ...s, configs: [...s.configs, emptyConfig()].slice(0, MAX_CONFIGS) }))}
          >
            Add configuration
          </Button>
        </Group>
      </form>
      <SimpleGrid cols={{ base: 1, sm: state.configs.length }} spacing="sm">
        {state.configs.map((config, i) => (
          <ConfigEditor
            key={i}
            index={i}
            config={config}
            names={names.data}
            onChange={(change) => setConfig(i, change)}
            onRemove={
              state.configs.length > MIN_CONFIGS
                ? () => setState((s) => ({ ...s, configs: s.configs.filter((_, j) => j !== i) }))
                : undefined
            }
          />
        ))}
      </SimpleGrid>
      {stale && (
        <Text size="sm" c="#a34200">
          The results below are for the setup before your last change: press Compare to run it again.
        </Text>
      )}
      {ranFor && <LabResults configs={ranFor.configs} runs={runs} comparison={comparison} />}
      <QuestionSets domain={domain} branch={branch || undefined} configs={state.configs} />
    </Stack>
  );
}

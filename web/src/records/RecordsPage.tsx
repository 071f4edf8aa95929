/**
 * Records: the query builder and the resolve box above the answer. The builder's state rides in the
 * URL (`?q=`, with `?kind=` as a shortcut from the overview), so a query is a shareable link; the
 * query runs when the state changes (or Run is pressed) and pages with the answer's cursor.
 */
import { Button, Code, Collapse, Group, Paper, Stack } from "@mantine/core";
import { useEffect, useState } from "react";
import { useSearchParams } from "react-router";
import { getSchema } from "../api/domain";
import { runQuery } from "../api/records";
import type { Candidate, QueryResult } from "../api/types";
import { ProblemAlert } from "../shell/ProblemAlert";
import { useReadPoint } from "../shell/readPoint";
import { useApi } from "../shell/useApi";
import { QueryAnswer } from "./QueryAnswer";
import { QueryBuilder } from "./QueryBuilder";
import { ResolveBox } from "./ResolveBox";
import { conditionFromPredicate, decodeQueryState, emptyQuery, encodeQueryState, toQueryBody, type QueryState } from "./queryModel";
import { usePageTitle } from "../shell/title";

export function RecordsPage() {
  const { domain, branch, at } = useReadPoint();
  usePageTitle("Records", domain);
  const point = { branch, at };
  const [params, setParams] = useSearchParams();
  const schema = useApi(() => getSchema(domain, branch), [domain, branch]);
  const fromUrl = decodeQueryState(params.get("q"));
  const [state, setState] = useState<QueryState>(fromUrl ?? emptyQuery(params.get("kind") ?? ""));
  const [answer, setAnswer] = useState<QueryResult | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [showDsl, setShowDsl] = useState(false);

  // Without a Kind from the URL, start with the first Kind the schema answer holds.
  useEffect(() => {
    if (!state.name && schema.data?.kinds[0]) setState(emptyQuery(schema.data.kinds[0].name));
  }, [schema.data, state.name]);

  const run = async (query: QueryState, cursor = "") => {
    if (!query.name) return;
    setBusy(true);
    setError(null);
    try {
      setAnswer(await runQuery(domain, toQueryBody(query, point, cursor)));
    } catch (problem) {
      setError(problem);
    } finally {
      setBusy(false);
    }
  };

  const submit = (query: QueryState) => {
    setParams(
      (current) => {
        const next = new URLSearchParams(current);
        next.set("q", encodeQueryState(query));
        next.delete("kind");
        return next;
      },
      { replace: true },
    );
    void run(query);
  };

  // Run once the Kind is known, and again when the read point changes.
  useEffect(() => {
    if (state.name) void run(state);
    // The dependencies are listed on purpose (the callbacks change identity every render).
  }, [domain, branch, at, state.name && schema.data ? state.name : ""]);

  const applyCandidate = (candidate: Candidate) => {
    const kind = candidate.kind ?? state.name;
    const base: QueryState = state.target === "kind" && state.name === kind ? state : { ...emptyQuery(kind), limit: state.limit };
    const next = candidate.predicate
      ? { ...base, conditions: [...base.conditions, conditionFromPredicate(candidate.predicate)] }
      : base;
    setState(next);
    submit(next);
  };

  return (
    <Stack gap="md">
      <ResolveBox domain={domain} point={point} onCandidate={applyCandidate} />
      <ProblemAlert error={schema.error} />
      {schema.data && (
        <Paper withBorder p="sm">
          <QueryBuilder schema={schema.data} state={state} onChange={setState} />
          <Group mt="sm">
            <Button onClick={() => submit(state)} loading={busy} data-testid="query-run">
              Run
            </Button>
            <Button variant="subtle" size="xs" onClick={() => setShowDsl((v) => !v)}>
              {showDsl ? "Hide" : "Show"} the DSL
            </Button>
          </Group>
          <Collapse expanded={showDsl} transitionDuration={0}>
            <Code block mt="sm" data-testid="query-dsl">
              {JSON.stringify(toQueryBody(state, point), null, 2)}
            </Code>
          </Collapse>
        </Paper>
      )}
      <ProblemAlert error={error} title="The query was refused" />
      {answer && (
        <QueryAnswer domain={domain} point={point} answer={answer} onNextPage={() => void run(state, answer.next_cursor ?? "")} />
      )}
    </Stack>
  );
}

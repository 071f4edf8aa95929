/**
 * Records: the query builder and the resolve box above the answer. The builder's state rides in the
 * URL (`?q=`, with `?kind=` as a shortcut from the overview), so a query is a shareable link; the
 * query runs once the schema is read (so a shared link sends it once) and when Run is pressed.
 *
 * Pages go both ways: the cursors of the pages seen are kept (the API's cursors only go forward), so
 * Previous goes back to the cursor before. A Kind's plain listing (no condition, selection or order)
 * is read with `GET .../kinds/{kind}/records`, any other query with `POST /query`; the total beside
 * the pages is the same query counted (`aggregate: {count: true}`). A column's header sorts by it
 * (ascending, descending, none), which runs the query again from its first page.
 */
import { Button, Code, Collapse, Group, Paper, Stack } from "@mantine/core";
import { useEffect, useState } from "react";
import { useSearchParams } from "react-router";
import { getSchema } from "../api/domain";
import { listKindRecords, runQuery } from "../api/records";
import type { Candidate, QueryResult } from "../api/types";
import { ProblemAlert } from "../shell/ProblemAlert";
import { useReadPoint } from "../shell/readPoint";
import { useApi } from "../shell/useApi";
import { QueryAnswer } from "./QueryAnswer";
import { QueryBuilder } from "./QueryBuilder";
import { ResolveBox } from "./ResolveBox";
import { attributeSpecs, valueType } from "./attributes";
import {
  conditionFromPredicate,
  decodeQueryState,
  emptyQuery,
  encodeQueryState,
  firstPage,
  isPlainListing,
  nextOrder,
  nextPage,
  pageCursor,
  previousPage,
  toCountBody,
  toQueryBody,
  type PageTrail,
  type QueryState,
  type TypeOf,
} from "./queryModel";
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
  const [trail, setTrail] = useState<PageTrail>(firstPage);
  const [total, setTotal] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [showDsl, setShowDsl] = useState(false);

  // Without a Kind from the URL, start with the first Kind the schema answer holds.
  useEffect(() => {
    if (!state.name && schema.data?.kinds[0]) setState(emptyQuery(schema.data.kinds[0].name));
  }, [schema.data, state.name]);

  const specs = attributeSpecs(schema.data, state);
  const typeOf: TypeOf = (attr) => valueType(specs[attr]);

  /** One page of `query` (the trail's last cursor); from its first page, its total too. */
  const run = async (query: QueryState, pages: PageTrail = firstPage) => {
    if (!query.name) return;
    setBusy(true);
    setError(null);
    const cursor = pageCursor(pages);
    try {
      const counting = pages.cursors.length === 1 && !query.groupBy;
      const [page, count] = await Promise.all([
        isPlainListing(query)
          ? listKindRecords(domain, query.name, point, query.limit, cursor)
          : runQuery(domain, toQueryBody(query, point, cursor, typeOf)),
        counting ? runQuery(domain, toCountBody(query, point, typeOf)) : Promise.resolve(null),
      ]);
      setAnswer(page);
      setTrail(pages);
      if (counting) setTotal(count?.aggregate?.count ?? null);
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

  // Run once the Kind and the schema are known (once: a shared link's query is sent once), and
  // again when the read point changes.
  useEffect(() => {
    if (state.name && schema.data) void run(state);
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
        <QueryAnswer
          domain={domain}
          point={point}
          answer={answer}
          page={trail.cursors.length}
          pageSize={state.limit}
          total={total}
          onNextPage={answer.next_cursor ? () => void run(state, nextPage(trail, answer.next_cursor ?? "")) : undefined}
          onPreviousPage={trail.cursors.length > 1 ? () => void run(state, previousPage(trail)) : undefined}
          orderBy={state.orderBy}
          onSort={
            state.groupBy
              ? undefined
              : (column) => {
                  const next = { ...state, orderBy: nextOrder(state.orderBy, column) };
                  setState(next);
                  submit(next);
                }
          }
        />
      )}
    </Stack>
  );
}

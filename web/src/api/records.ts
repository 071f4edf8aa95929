/** Reading Records: the query DSL, resolve, one Record with its history, lineage, explanation and
 * Links, and the context pack an agent would get for it. Every read takes the read point. */
import { get, post, seg } from "./client";
import { domainBase } from "./domain";
import type {
  ContextPack,
  DiffResult,
  Explanation,
  HistoryPage,
  Neighborhood,
  QueryResult,
  RecordView,
  ResolveResult,
} from "./types";
import type { QueryBody } from "../records/queryModel";

export interface ReadPointQuery {
  branch: string;
  at: string;
}

const recordBase = (domain: string, kind: string, key: string) =>
  `${domainBase(domain)}/kinds/${seg(kind)}/records/${seg(key)}`;

export const runQuery = (domain: string, body: QueryBody) => post<QueryResult>(`${domainBase(domain)}/query`, body);

/** A page of a Kind's Records in key order (`GET .../kinds/{kind}/records`, cursor paged). */
export const listKindRecords = (domain: string, kind: string, point: ReadPointQuery, limit: number, cursor = "") =>
  get<QueryResult>(`${domainBase(domain)}/kinds/${seg(kind)}/records`, { ...point, limit, cursor });

export const resolveWords = (domain: string, text: string, point: ReadPointQuery) =>
  post<ResolveResult>(`${domainBase(domain)}/resolve`, {
    text,
    ...(point.branch ? { branch: point.branch } : {}),
    ...(point.at ? { at: point.at } : {}),
  });

export const getRecord = (domain: string, kind: string, key: string, point: ReadPointQuery) =>
  get<RecordView>(recordBase(domain, kind, key), { ...point, links: true });

export const getHistory = (domain: string, kind: string, key: string, point: ReadPointQuery, cursor = "") =>
  get<HistoryPage>(`${recordBase(domain, kind, key)}/history`, { ...point, values: true, cursor, limit: 50 });

export const explainRecord = (domain: string, kind: string, key: string, point: ReadPointQuery) =>
  get<Explanation>(`${recordBase(domain, kind, key)}/explain`, { ...point });

/** The pack an agent asking about this Record gets: the Record, its neighbours one step away. */
export const contextFor = (domain: string, ref: string, point: ReadPointQuery) =>
  post<ContextPack>(`${domainBase(domain)}/context`, {
    refs: [ref],
    depth: 1,
    ...(point.branch ? { branch: point.branch } : {}),
  });

/** The graph `depth` Links around `refs` at the read point (headers only, no values). */
export const readNeighborhood = (domain: string, refs: string[], depth: number, point: ReadPointQuery) =>
  post<Neighborhood>(`${domainBase(domain)}/neighborhood`, {
    refs,
    depth,
    values: false,
    ...(point.branch ? { branch: point.branch } : {}),
    ...(point.at ? { at: point.at } : {}),
  });

/** What changed on a branch between two of its Revisions. */
export const getDiff = (domain: string, branch: string, from: string, to: string) =>
  get<DiffResult>(`${domainBase(domain)}/diff`, { branch, from, to });

/** Reconciliation: the candidate pairs of Records likely to be the same thing (docs/reconciliation.md). */
import { get, post, seg } from "./client";
import { domainBase } from "./domain";
import type { components } from "./openapi";

type Schemas = components["schemas"];
export type CandidateDoc = Schemas["CandidateDoc"];
export type CandidateList = Schemas["CandidateList"];
export type CandidateAccepted = Schemas["CandidateAccepted"];
export type CandidateDecided = Schemas["CandidateDecided"];
export type Scanned = Schemas["Scanned"];

export interface CandidateFilter {
  status: "open" | "accepted" | "dismissed" | "all";
  kind: string;
  cursor?: string;
}

const base = (domain: string) => `${domainBase(domain)}/reconciliation`;

export const listCandidates = (domain: string, filter: CandidateFilter) =>
  get<CandidateList>(base(domain), { status: filter.status, kind: filter.kind, cursor: filter.cursor, limit: 50 });

export const getCandidate = (domain: string, id: string) => get<CandidateDoc>(`${base(domain)}/${seg(id)}`);

export const acceptCandidate = (domain: string, id: string, keep: string, reason: string) =>
  post<CandidateAccepted>(`${base(domain)}/${seg(id)}/accept`, { keep, ...(reason.trim() ? { reason } : {}) });

export const dismissCandidate = (domain: string, id: string, reason: string) =>
  post<CandidateDecided>(`${base(domain)}/${seg(id)}/dismiss`, { reason });

export const scanCandidates = (domain: string) => post<Scanned>(`${base(domain)}/scan`);

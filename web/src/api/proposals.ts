/** Proposals: the list, one Proposal, its Conflicts, reviews, merge, close and Conflict resolution. */
import { get, post, seg } from "./client";
import { domainBase } from "./domain";
import type { Conflict, ConflictList, Proposal, ProposalList } from "./types";

export interface ProposalFilter {
  status: "" | "open" | "merged" | "closed" | "all";
  assigned: boolean;
  cursor?: string;
}

const proposalBase = (domain: string, id: string) => `${domainBase(domain)}/proposals/${seg(id)}`;

export const listProposals = (domain: string, filter: ProposalFilter) =>
  get<ProposalList>(`${domainBase(domain)}/proposals`, {
    status: filter.status,
    assigned: filter.assigned ? "me" : "",
    cursor: filter.cursor,
    limit: 50,
  });

export const getProposal = (domain: string, id: string) => get<Proposal>(proposalBase(domain, id));

export const listConflicts = (domain: string, id: string) => get<ConflictList>(`${proposalBase(domain, id)}/conflicts`);

export const reviewProposal = (domain: string, id: string, decision: "approve" | "request_changes", comment: string) =>
  post<Proposal>(`${proposalBase(domain, id)}/reviews`, { decision, ...(comment.trim() ? { comment } : {}) });

export const mergeProposal = (domain: string, id: string) => post<Proposal>(`${proposalBase(domain, id)}/merge`);

export const closeProposal = (domain: string, id: string) => post<Proposal>(`${proposalBase(domain, id)}/close`);

export type Resolution = { resolution: "ours" | "theirs" } | { resolution: "value"; value: unknown };

export const resolveConflict = (domain: string, id: string, conflict: string, resolution: Resolution) =>
  post<Conflict>(`${proposalBase(domain, id)}/conflicts/${seg(conflict)}/resolve`, resolution);

/** A Domain's shape and state: its schema, branches, health and the Revisions committed on a branch. */
import { get, seg } from "./client";
import type { BranchList, ChangesPage, DataHealth, DomainList, RevisionView, Schema } from "./types";
import type { ReadPointQuery } from "./records";

export const domainBase = (domain: string) => `/api/v1/domains/${seg(domain)}`;

export const listBranches = (domain: string) => get<BranchList>(`${domainBase(domain)}/branches`);

export const getSchema = (domain: string, branch: string) =>
  get<Schema>(`${domainBase(domain)}/schema`, { branch });

export const getHealth = (domain: string, point: ReadPointQuery) =>
  get<DataHealth>(`${domainBase(domain)}/health`, { branch: point.branch, at: point.at });

/** One page of Revisions on a (named) branch after `since`, oldest first. */
export const getChanges = (domain: string, branch: string, since = "", limit = 0) =>
  get<ChangesPage>(`${domainBase(domain)}/branches/${seg(branch)}/changes`, { since, limit });

/** One Revision on a branch's first-parent history (an id, a unique prefix or a tag), with a page of
 * the Records and Links it changed (`limit`, 0: the API's default). */
export const getRevision = (domain: string, branch: string, revision: string, limit = 0) =>
  get<RevisionView>(`${domainBase(domain)}/revisions/${seg(revision)}`, { branch, limit });

/** The Domains the caller holds a grant in (every one for the admin). */
export const listDomains = () => get<DomainList>("/api/v1/domains");

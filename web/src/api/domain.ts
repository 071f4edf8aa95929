/** A Domain's shape and state: its schema (and a change set's preview), branches, health and the
 * Revisions committed on a branch. */
import { get, post, seg } from "./client";
import type { BranchList, ChangesPage, DataHealth, DomainList, RevisionView, Schema, SchemaChangeItem, SchemaChangeResult } from "./types";
import type { ReadPointQuery } from "./records";

export const domainBase = (domain: string) => `/api/v1/domains/${seg(domain)}`;

export const listBranches = (domain: string) => get<BranchList>(`${domainBase(domain)}/branches`);

/** The schema on a branch, at its head or at a Revision (`at`: an id, a prefix or a tag). */
export const getSchema = (domain: string, branch: string, at = "") =>
  get<Schema>(`${domainBase(domain)}/schema`, { branch, at });

/** What a change set would do on a branch (`dry_run`: nothing is written); needs `schema.change`
 * there. `onInvalid: "clear"` previews it as it was sent with that (values cleared, not refused). */
export const previewSchemaChanges = (domain: string, branch: string, changes: SchemaChangeItem[], onInvalid: "refuse" | "clear" = "refuse") =>
  post<SchemaChangeResult>(`${domainBase(domain)}/branches/${seg(branch)}/schema/changes`, { changes, dry_run: true, on_invalid: onInvalid });

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

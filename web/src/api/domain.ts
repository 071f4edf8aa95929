/** A Domain's shape and state: branches (and, as the screens need them, schema, health, changes). */
import { get, seg } from "./client";
import type { BranchList } from "./types";

export const domainBase = (domain: string) => `/api/v1/domains/${seg(domain)}`;

export const listBranches = (domain: string) => get<BranchList>(`${domainBase(domain)}/branches`);

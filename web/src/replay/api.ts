/**
 * The replay's calls, through the app's one REST client: the sessions list, one session, and one
 * Record as of a Revision (the `RecordFetcher` the as-of cache batches).
 */

import { get, seg } from "../api/client";
import { ApiProblem } from "../api/problem";
import type { RecordFetcher } from "./asof";
import type { Session, SessionList } from "./types";

export interface SessionFilter {
  domain?: string;
  principal?: string;
  before?: string;
  limit?: number;
  /** The sessions with a step that opened or added to this Proposal. */
  proposal?: string;
}

export function listSessions(filter: SessionFilter = {}): Promise<SessionList> {
  return get<SessionList>("/api/v1/sessions", { ...filter });
}

export function getSession(session: string, signal?: AbortSignal): Promise<Session> {
  return get<Session>(`/api/v1/sessions/${seg(session)}`, undefined, { signal });
}

/** `GET .../kinds/{kind}/records/{key}?at=&branch=` as a status and a body (a 404 is an answer here). */
export const fetchRecordAsOf: RecordFetcher = async (request) => {
  const path = `/api/v1/domains/${seg(request.domain)}/kinds/${seg(request.kind)}/records/${seg(request.key)}`;
  try {
    const body = await get<unknown>(path, { at: request.at, branch: request.branch });
    return { status: 200, body };
  } catch (error) {
    if (error instanceof ApiProblem) return { status: error.status, body: { title: error.title, detail: error.detail } };
    throw error;
  }
};

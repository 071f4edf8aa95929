/**
 * The latest Revisions of a branch, kept live: read once from the change feed (`changes`, paged to
 * the end: it answers oldest first), then every `revision` event of the stream is put in front.
 * Both reads need a grant not narrowed to Kinds; a narrowed principal gets the API's 403, which the
 * overview shows in place of the list.
 */
import { getChanges } from "../api/domain";
import type { RevisionEvent } from "../api/types";

export const KEEP = 10;
const PAGE = 100; // agents.feed.page_size caps a page (100 by default)
const MAX_PAGES = 200;

/** The newest `keep` events of a list, newest first. */
export function newestFirst(events: RevisionEvent[], keep = KEEP): RevisionEvent[] {
  return [...events].sort((a, b) => b.sequence - a.sequence).slice(0, keep);
}

/** Put a streamed event in front of the list, once (a reconnect may deliver it again). */
export function withEvent(list: RevisionEvent[], event: RevisionEvent, keep = KEEP): RevisionEvent[] {
  if (list.some((e) => e.revision === event.revision)) return list;
  return newestFirst([event, ...list], keep);
}

/** A streamed `data` member as a Revision event, or null when it is not one. */
export function asRevisionEvent(data: unknown): RevisionEvent | null {
  if (typeof data !== "object" || data === null) return null;
  const event = data as Partial<RevisionEvent>;
  if (typeof event.revision !== "string" || typeof event.sequence !== "number") return null;
  return {
    kinds: {},
    relations: {},
    parents: [],
    message: "",
    author: "",
    origin: { type: "", ref: "" },
    ...event,
  } as RevisionEvent;
}

export async function latestRevisions(domain: string, branch: string): Promise<RevisionEvent[]> {
  let since = "";
  let kept: RevisionEvent[] = [];
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const answer = await getChanges(domain, branch, since, PAGE);
    kept = newestFirst([...kept, ...answer.events]);
    if (!answer.more || !answer.next_since) break;
    since = answer.next_since;
  }
  return kept;
}

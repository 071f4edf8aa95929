/**
 * The change feed as server-sent events: `GET .../branches/{branch}/events`, which EventSource calls
 * with the session cookie only (the gateway turns the cookie into the credential for this route).
 *
 * `events(domain, branch, onEvent)` opens the stream and returns the function that closes it. The
 * browser reconnects by itself after a drop, sending `Last-Event-ID`, so nothing is missed.
 */
import { seg } from "./client";

export interface FeedEvent {
  /** The SSE event name (`revision` for a committed Revision; `message` when the server names none). */
  type: string;
  /** The SSE id (the feed cursor) when the server sent one. */
  id: string;
  /** The parsed JSON data, or the raw text when it is not JSON. */
  data: unknown;
}

export interface EventsOptions {
  /** The event names to listen for besides the unnamed `message`. */
  names?: string[];
  onOpen?: () => void;
  onError?: () => void;
}

export const DEFAULT_EVENT_NAMES = ["revision"];

export function eventsUrl(domain: string, branch: string): string {
  return `/api/v1/domains/${seg(domain)}/branches/${seg(branch)}/events`;
}

export function parseEventData(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function events(
  domain: string,
  branch: string,
  onEvent: (event: FeedEvent) => void,
  options: EventsOptions = {},
): () => void {
  const source = new EventSource(eventsUrl(domain, branch), { withCredentials: true });
  const handle = (message: MessageEvent<string>) =>
    onEvent({ type: message.type, id: message.lastEventId, data: parseEventData(message.data) });
  source.addEventListener("message", handle);
  for (const name of options.names ?? DEFAULT_EVENT_NAMES) source.addEventListener(name, handle);
  if (options.onOpen) source.addEventListener("open", options.onOpen);
  if (options.onError) source.addEventListener("error", options.onError);
  return () => source.close();
}

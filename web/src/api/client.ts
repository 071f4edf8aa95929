/**
 * The one REST client of the app: `fetch` with the session cookie (`credentials: "same-origin"`),
 * the CSRF header on writes, JSON in and out, and problem+json answers thrown as ApiProblem.
 *
 * A 401 from any call is also announced to the listeners registered with `onUnauthenticated` (the
 * app shell, which returns to sign-in), so no screen has to handle an expired session itself.
 */
import { csrfHeaders } from "./csrf";
import { ApiProblem, networkProblem, parseProblem } from "./problem";

export type Query = Record<string, string | number | boolean | null | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  /** Do not announce a 401 (the sign-in form and the session probe handle it themselves). */
  quiet401?: boolean;
  signal?: AbortSignal;
}

type Listener = (problem: ApiProblem) => void;
const unauthenticatedListeners = new Set<Listener>();

/** Be told when a call answers 401; returns the function that stops listening. */
export function onUnauthenticated(listener: Listener): () => void {
  unauthenticatedListeners.add(listener);
  return () => unauthenticatedListeners.delete(listener);
}

/** `path` with the query members that have a value (empty strings and null are left out). */
export function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === "") continue;
    params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** One path segment, encoded (Kinds, keys and ids may hold `/`, `?`, spaces...). */
export const seg = (value: string): string => encodeURIComponent(value);

export async function request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json", ...csrfHeaders(method) };
  let body: string | undefined;
  if (options.body !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(options.body);
  }
  let response: Response;
  try {
    response = await fetch(withQuery(path, options.query), {
      method,
      headers,
      body,
      credentials: "same-origin",
      signal: options.signal,
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === "AbortError") throw error;
    throw networkProblem(error);
  }
  const text = await response.text();
  if (!response.ok) {
    const problem = parseProblem(response.status, response.statusText, text);
    if (problem.unauthenticated && !options.quiet401) {
      for (const listener of unauthenticatedListeners) listener(problem);
    }
    throw problem;
  }
  if (!text) return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw parseProblem(response.status, "Unreadable answer", text);
  }
}

export const get = <T>(path: string, query?: Query, options: Omit<RequestOptions, "query"> = {}) =>
  request<T>("GET", path, { ...options, query });

export const post = <T>(path: string, body?: unknown, options: Omit<RequestOptions, "body"> = {}) =>
  request<T>("POST", path, { ...options, body: body ?? {} });

/**
 * The read point of a Domain page: the branch and `at` (a Revision id, later a tag: any text, the
 * API answers) ride in the query string so a page is shareable. Links between Domain pages keep them.
 */
import { useCallback } from "react";
import { useParams, useSearchParams } from "react-router";

export interface ReadPoint {
  branch: string;
  at: string;
}

/** `?branch=&at=` for a read point, leaving out empty members ("" when both are empty). */
export function readPointQuery(point: ReadPoint, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  if (point.branch) params.set("branch", point.branch);
  if (point.at) params.set("at", point.at);
  for (const [name, value] of Object.entries(extra)) if (value) params.set(name, value);
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** The path of a Domain page (`sub` like "records" or "records/Supplier/S-1"), with the read point. */
export function domainPath(domain: string, sub: string, point: ReadPoint, extra: Record<string, string> = {}) {
  const tail = sub ? `/${sub.replace(/^\//, "")}` : "";
  return `/d/${encodeURIComponent(domain)}${tail}${readPointQuery(point, extra)}`;
}

/** The path of a Record page. */
export function recordPath(domain: string, kind: string, key: string, point: ReadPoint): string {
  return domainPath(domain, `records/${encodeURIComponent(kind)}/${encodeURIComponent(key)}`, point);
}

/** The current Domain and read point, and a setter that keeps the other query members. */
export function useReadPoint(): ReadPoint & { domain: string; setReadPoint: (p: Partial<ReadPoint>) => void } {
  const { domain = "" } = useParams();
  const [params, setParams] = useSearchParams();
  const branch = params.get("branch") ?? "";
  const at = params.get("at") ?? "";
  const setReadPoint = useCallback(
    (p: Partial<ReadPoint>) =>
      setParams((current) => {
        const next = new URLSearchParams(current);
        for (const [name, value] of Object.entries(p)) {
          if (value) next.set(name, value);
          else next.delete(name);
        }
        return next;
      }),
    [setParams],
  );
  return { domain, branch, at, setReadPoint };
}

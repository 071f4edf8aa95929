/** Small text helpers every screen shares: Revision ids, times, values. */

/** The first 12 hex digits of a Revision id (a unique prefix the API accepts as `at`). */
export const shortRevision = (revision: string | null | undefined): string => (revision ? revision.slice(0, 12) : "");

/** An RFC 3339 time as "2026-10-01 08:00:04 UTC" (UTC, as the API stores it). */
export function formatTime(value: string | null | undefined): string {
  if (!value) return "";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  return `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** A value as the API gives it (canonical: integers and decimals as strings), for display. */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return "—";
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

/** `Kind/key` split at the first slash (keys may hold slashes; Kind names never do). */
export function splitRef(ref: string): { kind: string; key: string } | null {
  const slash = ref.indexOf("/");
  if (slash <= 0 || slash === ref.length - 1) return null;
  return { kind: ref.slice(0, slash), key: ref.slice(slash + 1) };
}

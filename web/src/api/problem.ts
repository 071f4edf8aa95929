/**
 * Problems (RFC 9457) as the API answers them, turned into one typed error the screens render.
 *
 * Every 4xx/5xx of the gateway is `application/problem+json` with `type`, `title`, `status`,
 * `detail` (what to change) and `code`; some carry more members (`issues`, `next`, `branch`,
 * `reason`, `retry_after`...). A non-JSON failure (a proxy's HTML page, a dropped connection) still
 * becomes an ApiProblem so a screen never has to handle two error shapes.
 */

export interface ProblemIssue {
  path: string;
  rule: string;
  message: string;
}

export interface ProblemNext {
  action: string;
  detail: string;
  method: string;
  href: string;
  permission?: string;
}

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  issues?: ProblemIssue[];
  next?: ProblemNext[];
  [member: string]: unknown;
}

const KNOWN = new Set(["type", "title", "status", "detail", "code", "issues", "next"]);

export class ApiProblem extends Error {
  readonly status: number;
  readonly code: string;
  readonly title: string;
  readonly detail: string;
  readonly type: string;
  readonly issues: ProblemIssue[];
  readonly next: ProblemNext[];
  /** Members beyond the standard ones (`branch`, `reason`, `parameter`...). */
  readonly extra: Record<string, unknown>;

  constructor(doc: ProblemDocument) {
    super(doc.detail || doc.title);
    this.name = "ApiProblem";
    this.status = doc.status;
    this.code = doc.code;
    this.title = doc.title;
    this.detail = doc.detail;
    this.type = doc.type;
    this.issues = doc.issues ?? [];
    this.next = doc.next ?? [];
    this.extra = Object.fromEntries(Object.entries(doc).filter(([k]) => !KNOWN.has(k)));
  }

  /** True when the caller must sign in again (no session, expired, revoked). */
  get unauthenticated(): boolean {
    return this.status === 401;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function asIssues(value: unknown): ProblemIssue[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter(isRecord).map((i) => ({
    path: String(i.path ?? ""),
    rule: String(i.rule ?? ""),
    message: String(i.message ?? ""),
  }));
}

function asNext(value: unknown): ProblemNext[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter(isRecord).map((n) => ({
    action: String(n.action ?? ""),
    detail: String(n.detail ?? ""),
    method: String(n.method ?? ""),
    href: String(n.href ?? ""),
    ...(typeof n.permission === "string" ? { permission: n.permission } : {}),
  }));
}

/** The code a problem names: its `code`, else the last segment of its `type` URI. */
function codeOf(doc: Record<string, unknown>): string {
  if (typeof doc.code === "string" && doc.code) return doc.code;
  if (typeof doc.type === "string" && doc.type) return doc.type.split("/").pop() || "error";
  return "error";
}

/**
 * The problem a response body says, given its status and its text. Never throws: a body that is
 * not a problem document becomes one that quotes the status and the start of the text.
 */
export function parseProblem(status: number, statusText: string, body: string): ApiProblem {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  if (isRecord(parsed) && (typeof parsed.detail === "string" || typeof parsed.title === "string")) {
    const issues = asIssues(parsed.issues);
    const next = asNext(parsed.next);
    return new ApiProblem({
      ...parsed,
      type: typeof parsed.type === "string" ? parsed.type : "about:blank",
      title: typeof parsed.title === "string" ? parsed.title : statusText || `HTTP ${status}`,
      status: typeof parsed.status === "number" ? parsed.status : status,
      detail: typeof parsed.detail === "string" ? parsed.detail : "",
      code: codeOf(parsed),
      ...(issues ? { issues } : {}),
      ...(next ? { next } : {}),
    });
  }
  const text = body.trim().slice(0, 200);
  return new ApiProblem({
    type: "about:blank",
    title: statusText || `HTTP ${status}`,
    status,
    detail: text ? `The server answered ${status} without a problem document: ${text}` : `The server answered ${status}.`,
    code: status === 0 ? "network-error" : "http-error",
  });
}

/** A failure before any answer (offline, the gateway stopped) as a problem. */
export function networkProblem(error: unknown): ApiProblem {
  const reason = error instanceof Error ? error.message : String(error);
  return new ApiProblem({
    type: "about:blank",
    title: "The API could not be reached",
    status: 0,
    detail: `No answer from the server (${reason}). Check that Lorebase is running, then try again.`,
    code: "network-error",
  });
}

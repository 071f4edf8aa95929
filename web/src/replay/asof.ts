/**
 * The Records of a step as of the Revision it read.
 *
 * A paused step asks for its touched Records with `GET .../kinds/{kind}/records/{key}?at=<revision>`
 * (and the branch the step read, when its request named one). Answers are cached per
 * (Domain, branch, Revision, Record): a Revision never changes, so an answer is good forever, and
 * stepping back and forth costs nothing after the first visit. Requests go in batches of at most
 * `concurrency` at a time, and each Record is asked once even when several steps wait for it.
 *
 * A 404 at that Revision means the Record did not exist there (not yet created, or already deleted):
 * the replay marks the node. Other problems are kept as they are (shown, not cached).
 */

import type { RecordAsOf } from "./types";
import { splitRef } from "./timeline";

export type AsOf =
  | { state: "present"; record: RecordAsOf }
  | { state: "absent"; detail: string }
  | { state: "error"; status: number; detail: string };

export interface RecordRequest {
  domain: string;
  branch?: string;
  kind: string;
  key: string;
  at: string;
}

/** Fetches one Record; resolves with the status and the body (a RecordView or a problem). */
export type RecordFetcher = (request: RecordRequest) => Promise<{ status: number; body: unknown }>;

export interface ReadPoint {
  domain: string;
  branch?: string;
  revision: string;
}

function problemDetail(body: unknown, status: number): string {
  if (body && typeof body === "object") {
    const problem = body as { title?: unknown; detail?: unknown };
    if (typeof problem.detail === "string") return problem.detail;
    if (typeof problem.title === "string") return problem.title;
  }
  return `HTTP ${status}`;
}

export class AsOfCache {
  private readonly answers = new Map<string, AsOf>();
  private readonly pending = new Map<string, Promise<AsOf>>();
  private readonly queue: Array<() => void> = [];
  private running = 0;
  /** Requests sent (for tests and the page's status line). */
  fetched = 0;

  constructor(
    private readonly fetchRecord: RecordFetcher,
    private readonly concurrency = 6,
  ) {}

  private static key(point: ReadPoint, ref: string): string {
    return `${point.domain}\u0000${point.branch ?? ""}\u0000${point.revision}\u0000${ref}`;
  }

  /** What is known already, without asking. */
  peek(point: ReadPoint, ref: string): AsOf | undefined {
    return this.answers.get(AsOfCache.key(point, ref));
  }

  /** The Records `refs` as of `point`, asking only for those not known yet. */
  async load(point: ReadPoint, refs: readonly string[]): Promise<Map<string, AsOf>> {
    const unique = [...new Set(refs)];
    const answers = await Promise.all(unique.map((ref) => this.one(point, ref)));
    return new Map(unique.map((ref, i) => [ref, answers[i]!]));
  }

  private one(point: ReadPoint, ref: string): Promise<AsOf> {
    const key = AsOfCache.key(point, ref);
    const known = this.answers.get(key);
    if (known) return Promise.resolve(known);
    const waiting = this.pending.get(key);
    if (waiting) return waiting;
    const promise = this.slot().then(async (release) => {
      try {
        const { kind, key: recordKey } = splitRef(ref);
        this.fetched += 1;
        const { status, body } = await this.fetchRecord({
          domain: point.domain,
          branch: point.branch,
          kind,
          key: recordKey,
          at: point.revision,
        });
        let answer: AsOf;
        if (status === 200) {
          answer = { state: "present", record: body as RecordAsOf };
          this.answers.set(key, answer);
        } else if (status === 404) {
          answer = { state: "absent", detail: problemDetail(body, status) };
          this.answers.set(key, answer);
        } else {
          answer = { state: "error", status, detail: problemDetail(body, status) };
        }
        return answer;
      } catch (error) {
        return { state: "error", status: 0, detail: String(error) } as AsOf;
      } finally {
        this.pending.delete(key);
        release();
      }
    });
    this.pending.set(key, promise);
    return promise;
  }

  /** Wait for one of `concurrency` slots; the returned function frees it. */
  private slot(): Promise<() => void> {
    return new Promise((resolve) => {
      const start = () => {
        this.running += 1;
        resolve(() => {
          this.running -= 1;
          this.queue.shift()?.();
        });
      };
      if (this.running < this.concurrency) start();
      else this.queue.push(start);
    });
  }
}

/** Where a step read: its Domain, the branch of its Revision (a write's answer names it: a task
 * write's task branch) or else the branch its request named (if any), and its Revision. A task
 * branch deleted at merge is still read at its Revisions (the API reads its archive). */
export function readPointOf(step: {
  domain?: string;
  revision?: string;
  branch?: string;
  request: Record<string, unknown>;
}): ReadPoint | null {
  if (!step.domain || !step.revision) return null;
  const body = step.request.body;
  const fromBody = body && typeof body === "object" ? (body as Record<string, unknown>).branch : undefined;
  const named = typeof step.request.branch === "string" && step.request.branch ? step.request.branch : fromBody;
  const branch = step.branch || named;
  return {
    domain: step.domain,
    branch: typeof branch === "string" && branch ? branch : undefined,
    revision: step.revision,
  };
}

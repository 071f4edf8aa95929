import { describe, expect, it } from "vitest";
import { AsOfCache, readPointOf, type RecordRequest } from "./asof";

function server(missing: Set<string>) {
  const asked: RecordRequest[] = [];
  let running = 0;
  let most = 0;
  const fetcher = async (request: RecordRequest) => {
    asked.push(request);
    running += 1;
    most = Math.max(most, running);
    await new Promise((r) => setTimeout(r, 1));
    running -= 1;
    const ref = `${request.kind}/${request.key}`;
    if (request.kind === "Broken") return { status: 503, body: { title: "Unavailable", detail: "keeper is down" } };
    if (missing.has(ref)) return { status: 404, body: { title: "Not found", detail: `no Record ${ref}` } };
    return { status: 200, body: { ref, kind: request.kind, key: request.key, title: ref, values: {}, revision: request.at } };
  };
  return { fetcher, asked, most: () => most };
}

const point = { domain: "supply", revision: "r1" };

describe("AsOfCache", () => {
  it("asks each Record once per Revision and marks the ones that did not exist", async () => {
    const { fetcher, asked } = server(new Set(["Part/P-2"]));
    const cache = new AsOfCache(fetcher);
    const first = await cache.load(point, ["Part/P-1", "Part/P-2", "Part/P-1"]);
    expect(first.get("Part/P-1")?.state).toBe("present");
    expect(first.get("Part/P-2")).toEqual({ state: "absent", detail: "no Record Part/P-2" });
    expect(asked).toHaveLength(2);
    await cache.load(point, ["Part/P-1", "Part/P-2"]);
    expect(asked).toHaveLength(2);
    await cache.load({ ...point, revision: "r2" }, ["Part/P-1"]);
    expect(asked).toHaveLength(3);
    expect(asked[2]).toMatchObject({ kind: "Part", key: "P-1", at: "r2", domain: "supply" });
    expect(cache.peek(point, "Part/P-2")?.state).toBe("absent");
  });

  it("keeps at most `concurrency` requests in flight and shares a pending one", async () => {
    const { fetcher, asked, most } = server(new Set());
    const cache = new AsOfCache(fetcher, 3);
    const refs = Array.from({ length: 20 }, (_, i) => `Part/P-${i}`);
    await Promise.all([cache.load(point, refs), cache.load(point, refs)]);
    expect(asked).toHaveLength(20);
    expect(most()).toBeLessThanOrEqual(3);
  });

  it("does not cache other problems", async () => {
    const { fetcher, asked } = server(new Set());
    const cache = new AsOfCache(fetcher);
    const answer = await cache.load(point, ["Broken/B-1"]);
    expect(answer.get("Broken/B-1")).toEqual({ state: "error", status: 503, detail: "keeper is down" });
    await cache.load(point, ["Broken/B-1"]);
    expect(asked).toHaveLength(2);
  });
});

describe("readPointOf", () => {
  it("takes the branch from the request or its body, and needs a Domain and a Revision", () => {
    expect(readPointOf({ domain: "supply", revision: "r", request: { branch: "dev" } })).toEqual({
      domain: "supply", branch: "dev", revision: "r",
    });
    expect(readPointOf({ domain: "supply", revision: "r", request: { body: { branch: "b2" } } })?.branch).toBe("b2");
    expect(readPointOf({ domain: "supply", revision: "r", request: { branch: "" } })?.branch).toBeUndefined();
    expect(readPointOf({ domain: "supply", request: {} })).toBeNull();
    expect(readPointOf({ revision: "r", request: {} })).toBeNull();
  });

  it("prefers the branch a write's answer named (a task write's task branch) to the request's", () => {
    const step = { domain: "supply", revision: "r", branch: "agent/bot/audit", request: { body: { branch: "main" } } };
    expect(readPointOf(step)?.branch).toBe("agent/bot/audit");
  });
});

import { afterEach, describe, expect, it, vi } from "vitest";
import { onUnauthenticated, request, withQuery } from "./client";
import { setCsrfToken } from "./csrf";
import { ApiProblem } from "./problem";

function answer(status: number, body: unknown, type = "application/json") {
  return new Response(typeof body === "string" ? body : JSON.stringify(body), {
    status,
    headers: { "Content-Type": type },
  });
}

describe("request", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    setCsrfToken(null);
  });

  it("sends the cookie, JSON, and the CSRF token on a write", async () => {
    const fetch = vi.fn().mockResolvedValue(answer(200, { ok: true }));
    vi.stubGlobal("fetch", fetch);
    setCsrfToken("c5rf");
    expect(await request("POST", "/api/v1/x", { body: { a: 1 } })).toEqual({ ok: true });
    const [url, init] = fetch.mock.calls[0] as [string, RequestInit];
    expect(url).toBe("/api/v1/x");
    expect(init.credentials).toBe("same-origin");
    expect(init.body).toBe('{"a":1}');
    expect(init.headers).toMatchObject({ "X-CSRF-Token": "c5rf", "Content-Type": "application/json" });
  });

  it("sends no CSRF token on a read", async () => {
    const fetch = vi.fn().mockResolvedValue(answer(200, {}));
    vi.stubGlobal("fetch", fetch);
    setCsrfToken("c5rf");
    await request("GET", "/api/v1/x", { query: { branch: "", at: "abc", limit: 0 } });
    const [url, init] = fetch.mock.calls[0] as [string, RequestInit];
    expect(url).toBe("/api/v1/x?at=abc&limit=0");
    expect(init.headers).not.toHaveProperty("X-CSRF-Token");
  });

  it("throws the problem and tells the listeners about a 401", async () => {
    const problem = { type: "t/unauthenticated", title: "Unauthenticated", status: 401, detail: "sign in", code: "unauthenticated" };
    vi.stubGlobal("fetch", vi.fn().mockImplementation(async () => answer(401, problem, "application/problem+json")));
    const heard: ApiProblem[] = [];
    const stop = onUnauthenticated((p) => heard.push(p));
    await expect(request("GET", "/api/v1/x")).rejects.toMatchObject({ status: 401, code: "unauthenticated" });
    await expect(request("GET", "/api/v1/x", { quiet401: true })).rejects.toBeInstanceOf(ApiProblem);
    stop();
    expect(heard).toHaveLength(1);
  });

  it("turns a failed connection into a problem", async () => {
    vi.stubGlobal("fetch", vi.fn().mockRejectedValue(new TypeError("Failed to fetch")));
    await expect(request("GET", "/api/v1/x")).rejects.toMatchObject({ status: 0, code: "network-error" });
  });

  it("answers undefined for an empty success (204)", async () => {
    vi.stubGlobal("fetch", vi.fn().mockResolvedValue(new Response(null, { status: 204 })));
    expect(await request("DELETE", "/api/v1/x")).toBeUndefined();
  });
});

describe("withQuery", () => {
  it("leaves out empty members and encodes the rest", () => {
    expect(withQuery("/p", { a: "x y", b: null, c: undefined, d: "" })).toBe("/p?a=x+y");
    expect(withQuery("/p")).toBe("/p");
  });
});

import { describe, expect, it } from "vitest";
import { ApiProblem, networkProblem, parseProblem } from "./problem";

describe("parseProblem", () => {
  it("reads an RFC 9457 document with its extra members", () => {
    const body = JSON.stringify({
      type: "https://lorebase.dev/problems/review-required",
      title: "Conflict",
      status: 409,
      detail: "the Proposal needs 1 more approval",
      code: "review-required",
      next: [{ action: "review", detail: "approve it", method: "POST", href: "/x" }],
      branch: "main",
    });
    const problem = parseProblem(409, "Conflict", body);
    expect(problem).toBeInstanceOf(ApiProblem);
    expect(problem.code).toBe("review-required");
    expect(problem.detail).toBe("the Proposal needs 1 more approval");
    expect(problem.next[0]?.action).toBe("review");
    expect(problem.extra).toEqual({ branch: "main" });
    expect(problem.unauthenticated).toBe(false);
  });

  it("keeps the issues of a validation problem", () => {
    const body = JSON.stringify({
      type: "https://lorebase.dev/problems/validation-failed",
      title: "Unprocessable request",
      status: 422,
      detail: "limit: must be at most 1000",
      code: "validation-failed",
      issues: [{ path: "limit", rule: "max", message: "must be at most 1000" }],
    });
    const problem = parseProblem(422, "", body);
    expect(problem.issues).toEqual([{ path: "limit", rule: "max", message: "must be at most 1000" }]);
  });

  it("takes the code from the type when the code is missing", () => {
    const problem = parseProblem(401, "", JSON.stringify({ type: "https://lorebase.dev/problems/unauthenticated", title: "Unauthenticated", status: 401, detail: "send a key" }));
    expect(problem.code).toBe("unauthenticated");
    expect(problem.unauthenticated).toBe(true);
  });

  it("turns a body that is not a problem into one", () => {
    const problem = parseProblem(502, "Bad Gateway", "<html>upstream down</html>");
    expect(problem.status).toBe(502);
    expect(problem.title).toBe("Bad Gateway");
    expect(problem.detail).toContain("upstream down");
    expect(problem.code).toBe("http-error");
  });

  it("says what to do when the server cannot be reached", () => {
    const problem = networkProblem(new TypeError("Failed to fetch"));
    expect(problem.status).toBe(0);
    expect(problem.detail).toContain("Failed to fetch");
  });
});

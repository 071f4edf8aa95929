import { afterEach, describe, expect, it } from "vitest";
import { csrfHeaders, setCsrfToken } from "./csrf";

describe("csrfHeaders", () => {
  afterEach(() => setCsrfToken(null));

  it("adds the token to every unsafe method", () => {
    setCsrfToken("abc123");
    for (const method of ["POST", "PUT", "PATCH", "DELETE", "post"]) {
      expect(csrfHeaders(method)).toEqual({ "X-CSRF-Token": "abc123" });
    }
  });

  it("leaves safe methods alone", () => {
    setCsrfToken("abc123");
    expect(csrfHeaders("GET")).toEqual({});
    expect(csrfHeaders("HEAD")).toEqual({});
  });

  it("sends nothing before sign-in", () => {
    expect(csrfHeaders("POST")).toEqual({});
  });
});

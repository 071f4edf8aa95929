import { describe, expect, it } from "vitest";
import { startUrl, type IdentityProvider } from "./identityProviders";

const corp: IdentityProvider = {
  id: "corp",
  label: "Corp SSO",
  issuer: "https://login.example.com",
  start: "/api/v1/web/oidc/corp/start",
};

describe("startUrl", () => {
  it("goes to the provider's start, coming back to the page asked for", () => {
    expect(startUrl(corp, "/d/supply/records?kind=Supplier")).toBe(
      "/api/v1/web/oidc/corp/start?next=%2Fd%2Fsupply%2Frecords%3Fkind%3DSupplier",
    );
  });

  it("comes back to the start page when no page was asked for", () => {
    expect(startUrl(corp, null)).toBe("/api/v1/web/oidc/corp/start");
  });
});

/**
 * "Sign in with <issuer>" beside the API key.
 *
 * The providers come from `GET /api/v1/web/identity-providers` (none when the settings offer none:
 * then no button shows). A button is a plain link to the provider's `start` URL: the gateway runs the
 * authorization code flow with PKCE and comes back to the app (`next`) with the same session cookie
 * the key sign-in gives, so nothing here handles a token.
 */
import { Button, Divider, Stack } from "@mantine/core";
import { useEffect, useState } from "react";
import { request } from "../api/client";

/** An identity provider the web app offers (`GET /api/v1/web/identity-providers`). */
export interface IdentityProvider {
  id: string;
  label: string;
  issuer: string;
  start: string;
}

/** Where a provider's button goes: its start URL, with the app path to open afterwards. */
export function startUrl(provider: IdentityProvider, next: string | null): string {
  return next ? `${provider.start}?next=${encodeURIComponent(next)}` : provider.start;
}

export function IdentityProviderButtons({ next }: { next: string | null }) {
  const [providers, setProviders] = useState<IdentityProvider[]>([]);
  useEffect(() => {
    let live = true;
    request<{ providers: IdentityProvider[] }>("GET", "/api/v1/web/identity-providers", { quiet401: true })
      .then((answer) => live && setProviders(answer.providers))
      .catch(() => live && setProviders([]));
    return () => {
      live = false;
    };
  }, []);
  if (providers.length === 0) return null;
  return (
    <Stack gap="xs" data-testid="signin-providers">
      <Divider label="or" labelPosition="center" />
      {providers.map((provider) => (
        <Button
          key={provider.id}
          component="a"
          href={startUrl(provider, next)}
          variant="default"
          data-testid={`signin-provider-${provider.id}`}
        >
          Sign in with {provider.label}
        </Button>
      ))}
    </Stack>
  );
}

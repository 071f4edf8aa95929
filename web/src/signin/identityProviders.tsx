/**
 * "Sign in with <issuer>" beside the API key, and the Domains a signed-in person may open.
 *
 * The providers come from `GET /api/v1/web/identity-providers` (none when the settings offer none:
 * then no button shows). A button is a plain link to the provider's `start` URL: the gateway runs the
 * authorization code flow with PKCE and comes back to the app (`next`) with the same session cookie
 * the key sign-in gives, so nothing here handles a token.
 */
import { Anchor, Button, Divider, List, Stack, Text } from "@mantine/core";
import { useEffect, useState } from "react";
import { Link } from "react-router";
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

/** The Domains the signed-in principal may read (`GET /api/v1/domains` lists only those). */
export function ReadableDomains() {
  const [names, setNames] = useState<string[] | null>(null);
  useEffect(() => {
    let live = true;
    request<{ domains: { name: string }[] }>("GET", "/api/v1/domains")
      .then((answer) => live && setNames(answer.domains.map((d) => d.name)))
      .catch(() => live && setNames([]));
    return () => {
      live = false;
    };
  }, []);
  if (names === null) return null;
  if (names.length === 0) {
    return (
      <Text size="sm" c="dimmed" data-testid="signin-domains">
        No Domain grants you access yet; ask a Domain admin.
      </Text>
    );
  }
  return (
    <List size="sm" data-testid="signin-domains">
      {names.map((name) => (
        <List.Item key={name}>
          <Anchor component={Link} to={`/d/${encodeURIComponent(name)}`}>
            {name}
          </Anchor>
        </List.Item>
      ))}
    </List>
  );
}

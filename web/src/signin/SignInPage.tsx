/**
 * Sign in with an API key. The key goes once to `POST /api/v1/web/session`, which answers with an
 * HttpOnly session cookie; the key is kept nowhere (not in localStorage or sessionStorage). A
 * signed-in visitor goes on to the page asked for (`?next=`) or the Domain named here, else to the
 * list of the Domains it may read (DomainsPage). Beside the key, "Sign in with <issuer>" for each identity provider
 * the settings offer (identityProviders.tsx).
 */
import { Button, Center, Paper, PasswordInput, Stack, Text, TextInput, Title } from "@mantine/core";
import { useState, type FormEvent } from "react";
import { Navigate, useNavigate, useSearchParams } from "react-router";
import { ProblemAlert } from "../shell/ProblemAlert";
import { useAuth } from "../shell/auth";
import { lastDomain, rememberDomain } from "../shell/lastDomain";
import { IdentityProviderButtons } from "./identityProviders";

/** Where to go after sign-in: a same-app `next` path, else the Domain's overview, else the list
 * of the Domains the principal may read. */
export function destination(next: string | null, domain: string): string {
  if (next && next.startsWith("/") && !next.startsWith("//")) return next;
  return domain ? `/d/${encodeURIComponent(domain)}` : "/domains";
}

export function SignInPage() {
  const { session, signIn } = useAuth();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const [key, setKey] = useState("");
  const [domain, setDomain] = useState(lastDomain());
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const target = destination(params.get("next"), domain.trim());
  if (session && !busy) return <Navigate to={target} replace />;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn(key.trim());
      setKey("");
      if (domain.trim()) rememberDomain(domain.trim());
      navigate(target, { replace: true });
    } catch (problem) {
      setError(problem);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Center mih="80vh">
      <Paper withBorder shadow="sm" p="xl" w={420}>
        <form onSubmit={submit} data-testid="signin-form">
          <Stack>
            <Title order={2}>Lorebase</Title>
            <Text size="sm" c="dimmed">
              Sign in with an API key. It is exchanged for a session cookie and not stored in the
              browser.
            </Text>
            <PasswordInput
              label="API key"
              value={key}
              onChange={(e) => setKey(e.currentTarget.value)}
              required
              autoComplete="off"
              data-testid="key-input"
            />
            <TextInput
              label="Domain"
              value={domain}
              onChange={(e) => setDomain(e.currentTarget.value)}
              placeholder="supply"
              data-testid="domain-input"
            />
            <ProblemAlert error={error} />
            <Button type="submit" loading={busy} disabled={!key.trim()} data-testid="signin-submit">
              Sign in
            </Button>
            <IdentityProviderButtons next={target} />
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}

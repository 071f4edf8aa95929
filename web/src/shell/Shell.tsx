/** The frame around every signed-in page: the header with who is signed in and sign-out. */
import { AppShell, Anchor, Button, Group, Loader, Text } from "@mantine/core";
import { Suspense } from "react";
import { Link, Outlet, useLocation, useNavigate } from "react-router";
import { ErrorBoundary } from "./ErrorBoundary";
import { useAuth, useSession } from "./auth";
import { lastDomain } from "./lastDomain";

export function Shell() {
  const session = useSession();
  const { signOut } = useAuth();
  const navigate = useNavigate();
  const location = useLocation();
  const home = lastDomain();
  return (
    <AppShell header={{ height: 52 }} padding="md">
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between">
          <Group gap="lg">
            <Anchor component={Link} to={home ? `/d/${encodeURIComponent(home)}` : "/"} underline="never">
              <Text fw={700} size="lg" component="span">
                Lorebase
              </Text>
            </Anchor>
            <Anchor component={Link} to="/domains" size="sm">
              Domains
            </Anchor>
            <Anchor component={Link} to="/sessions" size="sm">
              Agent sessions
            </Anchor>
          </Group>
          <Group gap="sm">
            <Text size="sm" data-testid="principal">
              {session.principal}
              {session.admin ? " (admin)" : ""}
            </Text>
            <Button
              size="xs"
              variant="default"
              onClick={async () => {
                await signOut();
                navigate("/", { replace: true });
              }}
            >
              Sign out
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Main id="main" tabIndex={-1}>
        <ErrorBoundary resetKey={location.pathname}>
          <Suspense fallback={<Loader m="xl" aria-label="Loading the page" />}>
            <Outlet />
          </Suspense>
        </ErrorBoundary>
      </AppShell.Main>
    </AppShell>
  );
}

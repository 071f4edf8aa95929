/** The frame around every signed-in page: the header with who is signed in and sign-out. */
import { AppShell, Anchor, Button, Group, Text, Title } from "@mantine/core";
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
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between">
          <Group gap="lg">
            <Anchor component={Link} to={home ? `/d/${encodeURIComponent(home)}` : "/"} underline="never">
              <Title order={4}>Lorebase</Title>
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
      <AppShell.Main>
        <ErrorBoundary resetKey={location.pathname}>
          <Outlet />
        </ErrorBoundary>
      </AppShell.Main>
    </AppShell>
  );
}

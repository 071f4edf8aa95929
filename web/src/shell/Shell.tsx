/** The frame around every signed-in page: the header with who is signed in and sign-out. On a phone
 * (narrower than Mantine's `sm`) the links, the principal and Sign out move into a menu. */
import { AppShell, Anchor, Burger, Button, Group, Loader, Menu, Text } from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
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
  const [menuOpen, menu] = useDisclosure(false);
  const leave = async () => {
    await signOut();
    navigate("/", { replace: true });
  };
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
            <Anchor component={Link} to="/domains" size="sm" visibleFrom="sm">
              Domains
            </Anchor>
            <Anchor component={Link} to="/sessions" size="sm" visibleFrom="sm">
              Agent sessions
            </Anchor>
          </Group>
          <Menu opened={menuOpen} onChange={(open) => (open ? menu.open() : menu.close())} position="bottom-end">
            <Menu.Target>
              <Burger opened={menuOpen} hiddenFrom="sm" size="sm" aria-label="Navigation" />
            </Menu.Target>
            <Menu.Dropdown>
              <Menu.Label>{session.principal}</Menu.Label>
              <Menu.Item component={Link} to="/domains">
                Domains
              </Menu.Item>
              <Menu.Item component={Link} to="/sessions">
                Agent sessions
              </Menu.Item>
              <Menu.Item onClick={() => void leave()}>Sign out</Menu.Item>
            </Menu.Dropdown>
          </Menu>
          <Group gap="sm" visibleFrom="sm">
            <Text size="sm" data-testid="principal">
              {session.principal}
              {session.admin ? " (admin)" : ""}
            </Text>
            <Button size="xs" variant="default" onClick={() => void leave()}>
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

// The frame of every page: a header (the live-update connection, who is logged in, logout, and a warning when
// authentication is off), the navigation built from pages/registry.tsx, and the page itself.
import {
  Alert,
  Anchor,
  AppShell,
  Box,
  Burger,
  Button,
  Group,
  Loader,
  NavLink,
  ScrollArea,
  Text,
  Title,
} from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Suspense } from 'react';
import { Outlet, NavLink as RouterNavLink, useLocation } from 'react-router';
import { useLiveCacheSync } from '../api/live-cache.ts';
import { useSession } from '../auth/session.tsx';
import { LiveStatus } from '../components/LiveStatus.tsx';
import { pages } from '../pages/registry.tsx';

export function Shell() {
  const { state, logout } = useSession();
  const [opened, { toggle, close }] = useDisclosure(false);
  const location = useLocation();
  const authOff = state.status === 'authenticated' && !state.authEnabled;
  const user = state.status === 'authenticated' ? state.user : undefined;
  // The shell lives as long as the session: it holds the page's live-update socket open.
  useLiveCacheSync();
  return (
    <AppShell
      header={{ height: authOff ? 96 : 56 }}
      navbar={{ width: 230, breakpoint: 'sm', collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <Anchor href="#main" className="skip-link">
          Skip to content
        </Anchor>
        <Group h={56} px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Toggle navigation" />
            <Title order={1} size="h4">
              Model gateway
            </Title>
          </Group>
          <Group gap="sm" wrap="nowrap">
            <LiveStatus label="Live updates" />
            {user && (
              <Text size="sm" c="dimmed">
                {user.kind === 'admin' ? (
                  'Logged in with the admin API key'
                ) : (
                  <>
                    Logged in as <strong>{user.name}</strong>
                  </>
                )}
              </Text>
            )}
            {!authOff && (
              <Button variant="default" size="xs" onClick={() => void logout()}>
                Log out
              </Button>
            )}
          </Group>
        </Group>
        {authOff && (
          <Alert color="red" variant="filled" radius={0} py={6} role="alert">
            Authentication is off: anyone who reaches this port is admin.
          </Alert>
        )}
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Sections">
        <ScrollArea>
          <nav aria-label="Dashboard sections">
            {pages.map((p) => (
              <NavLink
                key={p.path}
                component={RouterNavLink}
                to={`/${p.path}`}
                label={p.label}
                active={location.pathname === `/${p.path}` || location.pathname.startsWith(`/${p.path}/`)}
                onClick={close}
              />
            ))}
          </nav>
        </ScrollArea>
      </AppShell.Navbar>
      <AppShell.Main>
        <Box id="main" tabIndex={-1} maw={1200}>
          <Suspense fallback={<Loader aria-label="Loading the page" />}>
            <Outlet />
          </Suspense>
        </Box>
      </AppShell.Main>
    </AppShell>
  );
}

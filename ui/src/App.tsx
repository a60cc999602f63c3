import { Alert, Button, Center, Loader, Stack, Text, Title } from '@mantine/core';
import { Navigate, Route, Routes } from 'react-router';
import { describeError } from './api/client.ts';
import { LoginPage } from './auth/LoginPage.tsx';
import { useSession } from './auth/session.tsx';
import { pages } from './pages/registry.tsx';
import { Shell } from './shell/Shell.tsx';

export function App() {
  const { state } = useSession();
  if (state.status === 'loading') {
    return (
      <Center mih="100vh">
        <Loader aria-label="Loading" />
      </Center>
    );
  }
  if (state.status === 'error') {
    return (
      <Center mih="100vh">
        <Stack maw={480}>
          <Alert color="red" role="alert" title="The gateway did not answer">
            {describeError(state.error)}
          </Alert>
          <Button onClick={state.retry}>Retry</Button>
        </Stack>
      </Center>
    );
  }
  if (state.status === 'anonymous') return <LoginPage expired={state.expired} />;
  const first = pages[0]?.path ?? 'providers';
  return (
    <Routes>
      <Route element={<Shell />}>
        <Route index element={<Navigate to={`/${first}`} replace />} />
        {pages.map((p) => (
          <Route key={p.path} path={`${p.path}/*`} element={<p.component />} />
        ))}
        <Route path="*" element={<NotFound />} />
      </Route>
    </Routes>
  );
}

function NotFound() {
  return (
    <Stack>
      <Title order={2}>Page not found</Title>
      <Text>This address is not a page of the dashboard. Pick a section in the navigation.</Text>
    </Stack>
  );
}

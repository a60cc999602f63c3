import { Alert, Button, Center, Paper, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core';
import { useForm } from '@mantine/form';
import { useState } from 'react';
import { describeError } from '../api/client.ts';
import { useSession } from './session.tsx';

export function LoginPage({ expired }: { expired: boolean }) {
  const { login } = useSession();
  const [error, setError] = useState<string | undefined>();
  const form = useForm({
    initialValues: { username: 'admin', password: '' },
    validate: { password: (v) => (v ? null : 'Enter the admin API key or your password') },
  });
  return (
    <Center mih="100vh" bg="gray.0">
      <Paper component="main" withBorder shadow="sm" p="xl" w={420} radius="md">
        <form
          aria-labelledby="login-title"
          onSubmit={form.onSubmit(async (v) => {
            setError(undefined);
            try {
              await login(v.username, v.password);
            } catch (err) {
              setError(describeError(err));
            }
          })}
        >
          <Stack>
            <Title order={1} size="h3" id="login-title">
              Model gateway
            </Title>
            <Text size="sm" c="dimmed">
              Log in with the admin API key (any username), or with a Basic user of the gateway’s config.json.
            </Text>
            {expired && (
              <Alert color="yellow" role="status">
                Your session has ended. Log in again.
              </Alert>
            )}
            {error && (
              <Alert color="red" role="alert" title="Login failed">
                {error}
              </Alert>
            )}
            <TextInput label="Username" autoComplete="username" {...form.getInputProps('username')} />
            <PasswordInput
              label="Password or admin API key"
              autoComplete="current-password"
              data-autofocus
              {...form.getInputProps('password')}
            />
            <Button type="submit" loading={form.submitting}>
              Log in
            </Button>
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}

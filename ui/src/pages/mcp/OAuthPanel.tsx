// Server-level OAuth of an MCP client: "Authorize" opens the authorization server's page (the gateway's authorize
// URL for this client) in a popup; the gateway's callback stores the token and closes the popup. Meanwhile this
// panel polls the configuration's status until it is authorized or failed, then asks the gateway to connect.
import { Alert, Anchor, Badge, Button, Group, Paper, Stack, Text, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, seg } from '../../api/client.ts';
import { ConfirmButton } from '../../components/ConfirmButton.tsx';
import { ErrorAlert, isOperatorOwned, useApiMutation } from '../../components/feedback.tsx';
import { formatTime } from '../logs/format.ts';
import { type McpClientConfig, mcpKeys, type OAuthStatus, oauthKey } from './types.ts';

/** How long the panel waits for the popup's authorization before it stops polling. */
const WAIT_MS = 10 * 60_000;
const POLL_MS = 1000;

type Phase =
  | { kind: 'idle' }
  | { kind: 'waiting'; since: number; blocked: boolean }
  | { kind: 'done'; ok: boolean; message: string };

const COLORS: Record<OAuthStatus['status'], string> = {
  pending: 'yellow',
  authorized: 'teal',
  failed: 'red',
  revoked: 'gray',
};

export function OAuthPanel({ client }: { client: McpClientConfig }) {
  const configId = client.oauth_config_id ?? '';
  const qc = useQueryClient();
  const [phase, setPhase] = useState<Phase>({ kind: 'idle' });
  const waiting = phase.kind === 'waiting';
  const status = useQuery({
    queryKey: oauthKey(configId),
    queryFn: () => api.get<OAuthStatus>(`/oauth/config/${seg(configId)}/status`),
    enabled: configId !== '',
    refetchInterval: waiting ? POLL_MS : false,
  });
  const complete = useApiMutation(
    () => api.post<{ message: string }>(`/mcp/client/${seg(client.client_id)}/complete-oauth`),
    { invalidate: [mcpKeys] },
    {
      onSuccess: (r) => setPhase({ kind: 'done', ok: true, message: `Authorized. ${r.message}.` }),
      onError: () => setPhase({ kind: 'idle' }),
    },
  );
  const revoke = useApiMutation(() => api.del<{ message: string }>(`/oauth/config/${seg(configId)}`), {
    invalidate: [oauthKey(configId), mcpKeys],
    success: (r) => r.message,
  });

  const s = status.data;
  useEffect(() => {
    if (phase.kind !== 'waiting' || !s) return;
    if (s.status === 'authorized') {
      setPhase({ kind: 'done', ok: true, message: 'Authorized; connecting to the server…' });
      complete.mutate(undefined);
    } else if (s.status === 'failed' || s.status === 'revoked') {
      setPhase({ kind: 'done', ok: false, message: s.status_message ?? `The authorization ${s.status}.` });
      void qc.invalidateQueries({ queryKey: mcpKeys });
    } else if (Date.now() - phase.since > WAIT_MS) {
      setPhase({ kind: 'done', ok: false, message: 'No authorization arrived in 10 minutes; stopped waiting.' });
    }
  }, [s, phase, complete, qc]);

  const authorize = (url: string) => {
    // Opened straight from the click, so popup blockers let it through; the popup closes itself at the end.
    const w = window.open(url, `mcp-oauth-${client.client_id}`, 'popup=yes,width=560,height=720');
    setPhase({ kind: 'waiting', since: Date.now(), blocked: w === null });
  };

  const readOnly = isOperatorOwned(client);
  return (
    <Paper withBorder p="md" component="section" aria-label="OAuth authorization">
      <Stack gap="sm">
        <Group justify="space-between">
          <Title order={3} size="h4">
            OAuth authorization
          </Title>
          {s && (
            <Badge color={COLORS[s.status]} variant="light" aria-label={`OAuth status: ${s.status}`}>
              {s.status}
            </Badge>
          )}
        </Group>
        <ErrorAlert error={status.error ?? complete.error ?? revoke.error} />
        {phase.kind === 'waiting' && (
          <Alert color="blue" role="status" title="Waiting for the authorization">
            {phase.blocked ? (
              <>
                The browser blocked the popup.{' '}
                <Anchor href={s?.authorize_url} target="_blank" rel="noreferrer">
                  Open the authorization page
                </Anchor>{' '}
                in a new tab; this page notices when it completes.
              </>
            ) : (
              'Sign in and approve access in the window that opened. This page notices when it completes.'
            )}
            <Group mt="xs">
              <Button size="xs" variant="default" onClick={() => setPhase({ kind: 'idle' })}>
                Stop waiting
              </Button>
            </Group>
          </Alert>
        )}
        {phase.kind === 'done' && (
          <Alert
            color={phase.ok ? 'teal' : 'red'}
            role={phase.ok ? 'status' : 'alert'}
            title={phase.ok ? 'Authorized' : 'The authorization failed'}
          >
            {phase.message}
          </Alert>
        )}
        {s && <StatusText status={s} said={phase.kind === 'done'} />}
        {s?.status === 'pending' && s.authorize_url && !readOnly && (
          <Group>
            <Button onClick={() => authorize(s.authorize_url ?? '')} loading={waiting}>
              Authorize
            </Button>
            <Text size="xs" c="dimmed">
              Opens the authorization server in a popup
              {s.expires_at ? `; usable until ${formatTime(s.expires_at)}` : ''}.
            </Text>
          </Group>
        )}
        {s?.status === 'authorized' && !readOnly && (
          <Group>
            <ConfirmButton
              label="Revoke"
              confirm="Revoke this authorization? Its tokens are deleted and the client’s tools stop working until the client is added again."
              loading={revoke.isPending}
              onConfirm={() => revoke.mutate(undefined)}
            />
          </Group>
        )}
      </Stack>
    </Paper>
  );
}

/** `said`: the outcome alert already shows the status message. */
function StatusText({ status: s, said }: { status: OAuthStatus; said: boolean }) {
  if (s.status === 'authorized') {
    return (
      <Text size="sm">
        A token is stored and refreshed by the gateway
        {s.token_expires_at ? `; it expires at ${formatTime(s.token_expires_at)}` : ''}
        {s.token_scopes?.length ? `. Scopes: ${s.token_scopes.join(', ')}` : ''}.
      </Text>
    );
  }
  if (s.status === 'pending' && !s.authorize_url) {
    return (
      <Text size="sm">
        {s.status_message ??
          'The authorization request expired before it was completed. Delete this client and add it again to start a new one.'}
      </Text>
    );
  }
  if (s.status === 'pending')
    return <Text size="sm">Not authorized yet: the client’s tools are unavailable until then.</Text>;
  return (
    <Text size="sm">
      {said ? '' : `${(s.status_message ?? `The authorization was ${s.status}`).replace(/\.?$/, '.')} `}To authorize
      again, delete this client and add it again.
    </Text>
  );
}

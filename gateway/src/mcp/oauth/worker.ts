// The background part of server-level OAuth, on every pod (the coordinator's locks keep the work to one pod at a
// time per token or configuration):
// - refreshes tokens before they expire (at most REFRESH_LEAD_MS ahead, or in the last half of a short life), for
//   clients that are not disabled (spec, server-level OAuth 5: paused while disabled);
// - starts the authorization of server-level configurations that no admin request started (MCP clients from
//   config.json or MCPClient resources) when `client.mcp_external_client_url` says where the callback is, so the
//   operator can show the URL; without that setting their status says to set it.
import type { Logger } from 'pino';
import type { Coordinator } from '../../state/coord/types.ts';
import type { OAuthConfigStore } from '../../state/services/oauth/configs.ts';
import { messageOf } from '../../util/errors.ts';
import type { TokenBinding } from '../types.ts';
import { redirectUri } from './base-url.ts';
import type { OAuthCore } from './core.ts';
import { REFRESH_LEAD_MS } from './tokens.ts';

export const NEEDS_EXTERNAL_URL =
  'Waiting for authorization: set client.mcp_external_client_url (the gateway’s public URL) so the gateway can ' +
  'start it and publish the authorize URL';

export interface OAuthWorkerDeps {
  core: OAuthCore;
  store: OAuthConfigStore;
  coord: Coordinator;
  logger: Logger;
  externalUrl: () => string | undefined;
  intervalMs: number;
}

export class OAuthWorker {
  private readonly deps: OAuthWorkerDeps;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(deps: OAuthWorkerDeps) {
    this.deps = deps;
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.deps.intervalMs);
    this.timer.unref();
  }

  /** One pass (also called by tests); concurrent calls share the pass in progress. */
  tick(): Promise<void> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async pass(): Promise<void> {
    try {
      await this.refreshDue();
      await this.startPending();
    } catch (err) {
      this.deps.logger.warn({ err: messageOf(err) }, 'MCP OAuth background pass failed');
    }
  }

  private async refreshDue(): Promise<void> {
    for (const row of await this.deps.store.dueForRefresh(REFRESH_LEAD_MS)) {
      const binding: TokenBinding =
        row.binding_kind === 'server'
          ? { kind: 'server' }
          : ({ kind: row.binding_kind, id: String(row.binding_id) } as TokenBinding);
      try {
        await this.deps.core.tokens.refreshToken(row.config_id, binding, REFRESH_LEAD_MS);
      } catch (err) {
        this.deps.logger.warn(
          { oauth_config: row.config_id, err: messageOf(err) },
          'MCP OAuth background refresh failed',
        );
      }
    }
  }

  private async startPending(): Promise<void> {
    const external = this.deps.externalUrl()?.replace(/\/+$/, '');
    const ids = await this.deps.store.pendingWithoutLiveUrl(external ? redirectUri(external) : null);
    if (ids.length === 0) return;
    for (const id of ids) {
      if (!external) {
        const record = await this.deps.store.get(id);
        if (record && record.status_message !== NEEDS_EXTERNAL_URL) {
          await this.deps.store.update(id, { status_message: NEEDS_EXTERNAL_URL });
        }
        continue;
      }
      // One pod starts it; a failure is retried after the lock's minute (or at once for a new public URL).
      const callback = redirectUri(external);
      if (!(await this.deps.coord.setIfAbsent(`mcp:oauth:autostart:${id}:${callback}`, '1', 60_000))) continue;
      try {
        await this.deps.core.beginAuthorization({
          configId: id,
          binding: { kind: 'server' },
          redirectUri: callback,
          kind: 'server',
        });
      } catch (err) {
        const message = `Starting the authorization failed: ${messageOf(err)}`.slice(0, 1000);
        this.deps.logger.warn({ oauth_config: id, err: message }, 'MCP OAuth autostart failed');
        await this.deps.store.update(id, { status_message: message });
      }
    }
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}

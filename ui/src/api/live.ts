// The dashboard's one live-update WebSocket (GET /ws), shared by every part of the page that listens. Each attempt
// asks for a fresh single-use ticket (POST /api/session/ws-ticket, with the session's CSRF header) and opens
// /ws?ticket= on this origin; a lost connection is tried again with backoff (live-protocol.ts). The socket is
// open while something listens, and closed for good when the page is left.
import { useEffect, useRef, useSyncExternalStore } from 'react';
import { api, describeError } from './client.ts';
import {
  type LiveMessage,
  parseLiveMessage,
  RETRY_POLICY,
  type RetryPolicy,
  recentAttempts,
  retryDelay,
} from './live-protocol.ts';

export type LiveStatus = 'off' | 'connecting' | 'live' | 'reconnecting';

export interface LiveState {
  status: LiveStatus;
  /** How many times the socket opened in this page load (a listener sees a reconnect as this growing past 1). */
  opens: number;
  /** Why the last attempt failed, in words (while reconnecting). */
  problem?: string | undefined;
  /** When the next attempt starts (epoch ms, while reconnecting). */
  retryAt?: number | undefined;
}

type Listener = (message: LiveMessage) => void;

interface WsTicket {
  ticket: string;
  expires_at: string;
}

/** After the last listener leaves, the socket is kept this long (a page switch re-subscribes at once). */
const IDLE_CLOSE_MS = 2_000;
/** Normal closure, sent when the page closes the socket itself. */
const CLOSE_NORMAL = 1000;

function socketUrl(ticket: string): string {
  const scheme = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${window.location.host}/ws?ticket=${encodeURIComponent(ticket)}`;
}

function closeWords(e: CloseEvent): string {
  if (e.code === 1001) return 'the gateway is restarting';
  if (e.code === 1013) return 'the gateway dropped this page for reading too slowly';
  // 1006: the upgrade was refused (401, 503) or the network went away; a browser is not told which.
  if (e.code === 1006) return 'the connection was refused or lost';
  return e.reason ? `closed: ${e.reason}` : `closed (${e.code})`;
}

class LiveConnection {
  private readonly listeners = new Set<Listener>();
  private readonly watchers = new Set<() => void>();
  private state: LiveState = { status: 'off', opens: 0 };
  private socket: WebSocket | undefined;
  /** Bumped by every attempt and by stop(): callbacks of an older attempt see a different number and do nothing. */
  private attempt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private attempts: number[] = [];
  private failures = 0;
  private openedAt = 0;
  /** The page was left (pagehide): nothing reconnects until it is shown again. */
  private left = false;
  private readonly policy: RetryPolicy;

  constructor(policy: RetryPolicy) {
    this.policy = policy;
    window.addEventListener('pagehide', () => {
      this.left = true;
      this.stop();
    });
    // Back from the browser's page cache: listeners are still there, the socket is not.
    window.addEventListener('pageshow', (e) => {
      if (!e.persisted) return;
      this.left = false;
      if (this.listeners.size > 0) this.connect();
    });
  }

  getState = (): LiveState => this.state;

  watch = (onChange: () => void): (() => void) => {
    this.watchers.add(onChange);
    return () => this.watchers.delete(onChange);
  };

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    if (this.state.status === 'off' && !this.left) this.connect();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size > 0) return;
      clearTimeout(this.idleTimer);
      this.idleTimer = setTimeout(() => this.stop(), IDLE_CLOSE_MS);
    };
  }

  private setState(next: LiveState): void {
    this.state = next;
    for (const w of this.watchers) w();
  }

  private async connect(): Promise<void> {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const mine = ++this.attempt;
    const now = Date.now();
    this.attempts = [...recentAttempts(this.attempts, now), now];
    const status = this.state.opens === 0 && this.failures === 0 ? 'connecting' : 'reconnecting';
    this.setState({ status, opens: this.state.opens, problem: this.state.problem });
    let ticket: string;
    try {
      ticket = (await api.post<WsTicket>('/session/ws-ticket')).ticket;
    } catch (err) {
      // A 401 also ends the session (client.ts), whose pages then stop listening.
      if (mine === this.attempt) this.retry(describeError(err));
      return;
    }
    if (mine !== this.attempt) return;
    let socket: WebSocket;
    try {
      socket = new WebSocket(socketUrl(ticket));
    } catch (err) {
      this.retry(describeError(err));
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      if (mine !== this.attempt) return;
      this.openedAt = Date.now();
      this.setState({ status: 'live', opens: this.state.opens + 1 });
    };
    socket.onmessage = (e: MessageEvent) => {
      if (mine !== this.attempt) return;
      const message = parseLiveMessage(e.data);
      if (!message) return;
      for (const l of [...this.listeners]) {
        try {
          l(message);
        } catch (err) {
          // One listener's bug must not starve the others.
          console.warn('live update listener failed', err);
        }
      }
    };
    socket.onclose = (e: CloseEvent) => {
      if (mine !== this.attempt) return;
      this.socket = undefined;
      if (this.openedAt > 0 && Date.now() - this.openedAt >= this.policy.stableMs) this.failures = 0;
      this.openedAt = 0;
      this.retry(closeWords(e));
    };
  }

  private retry(problem: string): void {
    if (this.listeners.size === 0 || this.left) {
      this.stop();
      return;
    }
    this.failures++;
    const now = Date.now();
    const delay = retryDelay(this.policy, this.failures, this.attempts, now, Math.random());
    this.setState({ status: 'reconnecting', opens: this.state.opens, problem, retryAt: now + delay });
    this.retryTimer = setTimeout(() => void this.connect(), delay);
  }

  private stop(): void {
    this.attempt++;
    clearTimeout(this.retryTimer);
    clearTimeout(this.idleTimer);
    this.retryTimer = undefined;
    this.idleTimer = undefined;
    const s = this.socket;
    this.socket = undefined;
    if (s && s.readyState !== WebSocket.CLOSED) s.close(CLOSE_NORMAL);
    this.failures = 0;
    this.openedAt = 0;
    if (this.state.status !== 'off') this.setState({ status: 'off', opens: this.state.opens });
  }
}

let shared: LiveConnection | undefined;

/** The page's one connection (made on first use). */
function connection(): LiveConnection {
  shared ??= new LiveConnection(RETRY_POLICY);
  return shared;
}

/** The connection's state, re-rendering on change. */
export function useLiveState(): LiveState {
  const c = connection();
  return useSyncExternalStore(c.watch, c.getState);
}

/** Calls `onMessage` with every live message while `enabled` (listening keeps the shared socket open). */
export function useLiveMessages(onMessage: Listener, enabled = true): void {
  const handler = useRef(onMessage);
  useEffect(() => {
    handler.current = onMessage;
  });
  useEffect(() => {
    if (!enabled) return;
    return connection().subscribe((m) => handler.current(m));
  }, [enabled]);
}

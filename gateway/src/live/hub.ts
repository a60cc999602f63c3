// The live-update hub of one gateway process: the `/ws` clients, their heartbeat and backpressure, and what they
// are sent. Request-log rows reach it from every pod through the coordinator (a notice per stored chunk, read
// while this pod has a client); configuration changes from State once this pod's snapshot applied them.
import WebSocket from 'ws';
import type { Unsubscribe } from '../state/coord/types.ts';
import type { ChangeEvent } from '../state/events.ts';
import { ClientFlow, DEFAULT_FLOW_BOUNDS, type FlowBounds } from './flow.ts';
import {
  type LogKind,
  liveLogMessage,
  MAX_LIVE_LOGS_PER_BATCH,
  parseStoredLogs,
  type StoredLogs,
  storeUpdateMessage,
} from './messages.ts';

/** Settings a deployment or a test may change. */
export interface LiveTuning {
  /** Ping period; a client that did not answer the previous ping is terminated (30 s, as the reference). */
  heartbeatMs?: number;
  /** Concurrent `/ws` clients of this process. */
  maxClients?: number;
  /** Largest message a client may send (they are discarded; a larger one closes with 1008). */
  maxClientMessageBytes?: number;
  flow?: FlowBounds;
}

export interface LiveHubOptions extends LiveTuning {
  /** Subscribes to the notices of stored request-log and MCP tool-log rows (every pod's). */
  subscribeLogs(onMessage: (message: string) => void): Promise<Unsubscribe>;
  /** The rows of these ids as the API shows them (GET /api/logs/{id}, GET /api/mcp-logs); absent ids are left out. */
  loadLogs(ids: readonly string[], kind: LogKind): Promise<Record<string, unknown>[]>;
  log: { warn(obj: object, msg: string): void };
}

/** Batches waiting while one is loaded; past this the oldest is counted as skipped. */
const MAX_QUEUED_BATCHES = 8;
/** How often a client that fell behind is checked for having caught up. */
const DRAIN_CHECK_MS = 200;
/** A client closed for reading too slowly gets this long to finish the close handshake. */
const SLOW_CLOSE_GRACE_MS = 5_000;
/** On shutdown, how long clients get to answer the close before they are cut. */
const SHUTDOWN_GRACE_MS = 1_000;

interface Client {
  socket: WebSocket;
  flow: ClientFlow;
  /** Answered the last ping. */
  alive: boolean;
}

/** A place held for a client between the upgrade's checks and the upgrade itself. */
export class Reservation {
  private held = true;
  private readonly onRelease: () => void;
  /** Resolves once this pod receives every pod's log notices (rejects when the coordinator cannot subscribe). */
  readonly ready: Promise<void>;
  constructor(ready: Promise<void>, onRelease: () => void) {
    this.ready = ready;
    this.onRelease = onRelease;
  }
  /** Gives the place up (the upgrade failed or the caller left); a no-op once taken or released. */
  release(): void {
    if (this.take()) this.onRelease();
  }
  /** True once: the place goes to the client being attached. */
  take(): boolean {
    const was = this.held;
    this.held = false;
    return was;
  }
}

export class LiveHub {
  private readonly opts: LiveHubOptions;
  private readonly heartbeatMs: number;
  readonly maxClients: number;
  private readonly maxClientMessageBytes: number;
  private readonly bounds: FlowBounds;
  private readonly clients = new Set<Client>();
  private reserved = 0;
  private closed = false;
  private subscription: Promise<Unsubscribe> | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  /** Clients with skipped log events, checked until they caught up. */
  private readonly behind = new Set<Client>();
  private drainCheck: NodeJS.Timeout | undefined;
  private readonly queue: StoredLogs[] = [];
  private loading = false;

  constructor(opts: LiveHubOptions) {
    this.opts = opts;
    this.heartbeatMs = opts.heartbeatMs ?? 30_000;
    this.maxClients = opts.maxClients ?? 64;
    this.maxClientMessageBytes = opts.maxClientMessageBytes ?? 4096;
    this.bounds = opts.flow ?? DEFAULT_FLOW_BOUNDS;
  }

  get size(): number {
    return this.clients.size;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Holds a place for a client about to be upgraded; undefined when this process is full or shutting down. */
  reserve(): Reservation | undefined {
    if (this.closed || this.clients.size + this.reserved >= this.maxClients) return undefined;
    this.reserved++;
    const ready = this.subscribe();
    return new Reservation(ready, () => {
      this.reserved--;
      this.unsubscribeIfIdle();
    });
  }

  /** Serves an upgraded socket in the place `reservation` held. */
  attach(socket: WebSocket, reservation: Reservation): void {
    if (!reservation.take()) {
      socket.terminate();
      return;
    }
    this.reserved--;
    if (this.closed) {
      socket.close(1001, 'the gateway is shutting down');
      this.unsubscribeIfIdle();
      return;
    }
    const client: Client = { socket, flow: new ClientFlow(this.bounds), alive: true };
    this.clients.add(client);
    this.startHeartbeat();
    socket.on('pong', () => {
      client.alive = true;
    });
    // Client messages are not part of the protocol: read and discarded, within a bound.
    socket.on('message', (data) => {
      if (byteLength(data) > this.maxClientMessageBytes) {
        socket.close(
          1008,
          `messages to /ws are not part of the protocol (at most ${this.maxClientMessageBytes} bytes)`,
        );
      }
    });
    socket.once('close', () => {
      this.clients.delete(client);
      this.behind.delete(client);
      if (this.clients.size === 0) this.stopTimers();
      this.unsubscribeIfIdle();
    });
  }

  /** A configuration change this pod now serves. */
  storeChanged(event: ChangeEvent): void {
    if (this.clients.size === 0) return;
    this.broadcast(storeUpdateMessage(event), undefined);
  }

  /** Closes every client (1001) and stops listening. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopTimers();
    this.queue.length = 0;
    const open = [...this.clients];
    const closed = open.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.socket.readyState === WebSocket.CLOSED) resolve();
          else c.socket.once('close', () => resolve());
        }),
    );
    for (const c of open) c.socket.close(1001, 'the gateway is shutting down');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(closed),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, SHUTDOWN_GRACE_MS);
      }),
    ]);
    clearTimeout(timer);
    for (const c of this.clients) c.socket.terminate();
    this.clients.clear();
    this.reserved = 0;
    this.unsubscribeIfIdle();
  }

  private subscribe(): Promise<void> {
    if (!this.subscription) {
      const s = this.opts.subscribeLogs((message) => this.onLogsNotice(message));
      this.subscription = s;
      // A failed subscription is tried again by the next client (this one is refused: 503).
      s.catch(() => {
        if (this.subscription === s) this.subscription = undefined;
      });
    }
    return this.subscription.then(() => undefined);
  }

  private unsubscribeIfIdle(): void {
    if (this.clients.size + this.reserved > 0 || !this.subscription) return;
    const s = this.subscription;
    this.subscription = undefined;
    this.queue.length = 0;
    s.then((unsubscribe) => unsubscribe()).catch(() => undefined);
  }

  private onLogsNotice(message: string): void {
    if (this.clients.size === 0) return;
    const notice = parseStoredLogs(message);
    if (!notice) return;
    if (this.queue.length >= MAX_QUEUED_BATCHES) {
      const dropped = this.queue.shift();
      if (dropped) this.skipAll(dropped.rows, dropped.kind);
    }
    this.queue.push(notice);
    if (!this.loading) void this.sendQueued();
  }

  /** Loads and sends the queued batches one at a time, in the order their notices came. */
  private async sendQueued(): Promise<void> {
    this.loading = true;
    try {
      for (let batch = this.queue.shift(); batch; batch = this.queue.shift()) await this.sendBatch(batch);
    } finally {
      this.loading = false;
    }
  }

  private async sendBatch(batch: StoredLogs): Promise<void> {
    const ids = batch.ids.slice(-MAX_LIVE_LOGS_PER_BATCH);
    let rows: Record<string, unknown>[];
    try {
      rows = ids.length > 0 ? await this.opts.loadLogs(ids, batch.kind) : [];
    } catch (err) {
      this.opts.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'live logs: loading rows failed');
      this.skipAll(batch.rows, batch.kind);
      return;
    }
    if (batch.rows > ids.length) this.skipAll(batch.rows - ids.length, batch.kind);
    // In the order the rows were written (ids of one millisecond do not sort by time).
    const byId = new Map(rows.map((row) => [row['id'], row]));
    for (const id of ids) {
      const row = byId.get(id);
      if (row) this.broadcast(liveLogMessage(batch.kind, row), batch.kind);
    }
  }

  /** One message, serialised once, to every client (log events, of `kind`, subject to each client's backpressure). */
  private broadcast(message: string, kind: LogKind | undefined): void {
    for (const c of this.clients) this.deliver(c, c.flow.offer(c.socket.bufferedAmount, message, kind));
  }

  private skipAll(count: number, kind: LogKind): void {
    if (count <= 0) return;
    for (const c of this.clients) this.deliver(c, c.flow.skip(c.socket.bufferedAmount, count, kind));
  }

  private deliver(c: Client, frames: readonly string[] | 'close'): void {
    if (c.socket.readyState !== WebSocket.OPEN) return;
    if (frames === 'close') {
      c.socket.close(1013, 'the client reads too slowly');
      setTimeout(() => c.socket.terminate(), SLOW_CLOSE_GRACE_MS).unref();
      return;
    }
    for (const f of frames) c.socket.send(f);
    if (c.flow.skipped > 0) this.watchDrain(c);
  }

  private watchDrain(c: Client): void {
    this.behind.add(c);
    if (this.drainCheck) return;
    this.drainCheck = setInterval(() => {
      for (const b of this.behind) {
        if (b.socket.readyState !== WebSocket.OPEN) {
          this.behind.delete(b);
          continue;
        }
        for (const notice of b.flow.drained(b.socket.bufferedAmount)) b.socket.send(notice);
        if (b.flow.skipped === 0) this.behind.delete(b);
      }
      if (this.behind.size === 0) {
        clearInterval(this.drainCheck);
        this.drainCheck = undefined;
      }
    }, DRAIN_CHECK_MS);
    this.drainCheck.unref();
  }

  private startHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => {
      for (const c of this.clients) {
        if (!c.alive) {
          c.socket.terminate();
          continue;
        }
        c.alive = false;
        if (c.socket.readyState === WebSocket.OPEN) c.socket.ping();
      }
    }, this.heartbeatMs);
    this.heartbeat.unref();
  }

  private stopTimers(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    clearInterval(this.drainCheck);
    this.drainCheck = undefined;
    this.behind.clear();
  }
}

function byteLength(data: WebSocket.RawData): number {
  if (Array.isArray(data)) return data.reduce((n, b) => n + b.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
}

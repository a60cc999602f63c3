// The lease book's tables: a slot per shared counter this pod leases from, the lease it holds there, and what
// one request took from leases.

export interface RateLease {
  slot: RateSlot;
  capacity: number;
  taken: number;
  reported: number;
  /** The counter without this lease when it was granted (for the rate-limit headers). */
  base: number;
  grantedAt: number;
  expiresAt: number;
  retired: boolean;
}

/** What a pod tracks per counter to decide when to ask for a lease and how big. */
export interface SlotGate {
  /** The next lease's size, in requests. */
  want: number;
  retryAt: number;
  acquiring: boolean;
  /** Requests of this counter this pod saw since `hitsSince` (for minRatePerSecond). */
  hits: number;
  hitsSince: number;
  /** When this counter last got a lease here (a busy counter renews without waiting for the rate again). */
  leasedAt: number;
}

export interface RateSlot extends SlotGate {
  counter: string;
  leaseKey: string;
  windowEndMs: number;
  lease: RateLease | undefined;
}

export type BudgetState = 'active' | 'draining' | 'lost';

export interface BudgetLease {
  id: string;
  slot: BudgetSlot;
  granted: number;
  /** What the lease's entry reserves in Redis now. */
  entry: number;
  entryExpiresAt: number;
  /** Costs of settled requests not yet reported. */
  spent: number;
  /** Reservations of the requests running under the lease. */
  reserved: number;
  inFlight: Map<string, number>;
  state: BudgetState;
  grantedAt: number;
  expiresAt: number;
  flushing: boolean;
  /** Set while a lost lease hands its requests over; their settlements wait for it. */
  handover: Promise<void> | undefined;
}

export interface BudgetSlot extends SlotGate {
  budgetId: string;
  periodStartMs: number;
  keys: [string, string, string];
  periodEndMs: number;
  lease: BudgetLease | undefined;
}

/** What one request took from leases (its admission's shares). */
export interface LeaseTicket {
  rates: RateLease[];
  budgets: { lease: BudgetLease; amount: number }[];
}

// One call on one existing resource that the path names (retrieve, delete, cancel, content, a container's
// files): what differs between files, batches and containers is data here; the call itself is runResourceCall's,
// which checks the resource's owner (another tenant's is 404) and sends it with the key that created it.
import { RequestError } from '../http/request-error.ts';
import type { CallContext, ProviderAdapter } from '../providers/types.ts';
import type { ResourceCall } from './resource-call.ts';
import type { ResourceRef } from './resource-ref.ts';

/** A kind of resource as its by-id routes address it. */
export interface ResourceKind<C, P, A extends unknown[]> {
  /** The owner kind (resource-owners.ts) of the resource the path names. */
  kind: string;
  /** The provider's calls on this kind; undefined when it offers none. */
  calls: (adapter: ProviderAdapter) => C | undefined;
  /** The path parameters (and the query, where the call takes one), checked: throws on bad input. */
  params: (params: unknown, query: unknown) => P;
  /** The addressed resource's id among them (the container's, for one of its files). */
  id: (p: P) => string;
  /** What the provider's method takes before its CallContext. */
  args: (p: P) => A;
}

/** A kind whose routes name the resource by one id, the only thing its provider methods take. */
export function kindById<C>(
  kind: string,
  calls: (adapter: ProviderAdapter) => C | undefined,
  id: (params: unknown) => string,
): ResourceKind<C, string, [string]> {
  return { kind, calls, params: id, id: (p) => p, args: (p) => [p] };
}

/** One operation on a kind of resource. */
export interface ByIdOp<C, A extends unknown[], T> {
  /** Logged and measured as this (`file_retrieve`, `batch_cancel`, ...). */
  requestType: string;
  /** `provider X does not support <label>` when the provider lacks the method. */
  label: string;
  /** The provider's method among the kind's calls, or undefined; called as a method (it may use `this`). */
  method: (calls: C) => ((...args: [...A, CallContext]) => Promise<T>) | undefined;
  /** The call deletes the addressed resource: its owner record goes with it. */
  deletes?: boolean | undefined;
  /** Resources the answer names that belong to the addressed resource's owner (a batch's files). */
  names?: ((value: T) => ResourceRef[]) | undefined;
  /** The log row is written when a streamed answer ends (ResourceCall's deferLog). */
  deferLog?: ResourceCall<T>['deferLog'];
}

/**
 * The model-less call `op` makes on the resource the request's path names. A bad parameter throws a
 * RequestError carrying the request type, before any provider is chosen.
 */
export function byIdCall<C, P, A extends unknown[], T>(
  kind: ResourceKind<C, P, A>,
  op: ByIdOp<C, A, T>,
  request: { params: unknown; query: unknown },
): ResourceCall<T> {
  let p: P;
  try {
    p = kind.params(request.params, request.query);
  } catch (err) {
    throw new RequestError(err, { request_type: op.requestType });
  }
  const args = kind.args(p);
  return {
    requestType: op.requestType,
    label: op.label,
    // Reads and deletes may be sent again, and cancelling twice cancels once.
    idempotent: true,
    target: { kind: kind.kind, id: kind.id(p) },
    deletes: op.deletes,
    names: op.names,
    deferLog: op.deferLog,
    method: (adapter) => {
      const calls = kind.calls(adapter);
      const fn = calls && op.method(calls);
      return fn && ((ctx) => fn.call(calls, ...args, ctx));
    },
  };
}

// A list of one kind of provider-held resource (files, batches, containers) as a model-less call: what differs
// between kinds is data here. A virtual key sees only its own resources (resource-owners.ts), others the
// provider's page as it is.
import type { Principal } from '../http/auth.ts';
import type { CallContext, ProviderAdapter } from '../providers/types.ts';
import type { Runtime } from '../runtime.ts';
import type { ResourceCall } from './resource-call.ts';
import { type ListPage, ownedPage } from './resource-owners.ts';
import type { ResourceRef } from './resource-ref.ts';

/** The kind listed: its owner kind and the provider's calls on it (a ResourceKind is one). */
export interface ListedKind<C> {
  kind: string;
  calls: (adapter: ProviderAdapter) => C | undefined;
}

/** One list operation on a kind. */
export interface ListOp<C, Q, L> {
  /** Logged and measured as this (`file_list`, ...). */
  requestType: string;
  /** `provider X does not support <label>` when the provider lacks the method. */
  label: string;
  /** The provider's list method among the kind's calls, or undefined; called as a method. */
  method: (calls: C) => ((query: Q, ctx: CallContext) => Promise<L>) | undefined;
  /** Resources the page names that become the caller's (a batch's files). */
  names?: ((page: L) => ResourceRef[]) | undefined;
}

/** The model-less call that lists `kind` from the caller's cursor, filtered to what the caller may see. */
export function ownedListCall<
  C,
  Q extends { limit?: number | undefined; after?: string | undefined },
  L extends ListPage<{ id: string }>,
>(rt: Runtime, principal: Principal | null, kind: ListedKind<C>, op: ListOp<C, Q, L>, query: Q): ResourceCall<L> {
  return {
    requestType: op.requestType,
    label: op.label,
    idempotent: true,
    names: op.names,
    method: (adapter) => {
      const calls = kind.calls(adapter);
      const list = calls && op.method(calls);
      return (
        list &&
        ((ctx) =>
          ownedPage(rt, principal, ctx.provider, kind.kind, query, (after, limit) =>
            list.call(calls, { ...query, after, limit }, ctx),
          ))
      );
    },
  };
}

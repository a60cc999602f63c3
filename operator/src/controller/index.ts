// The operator's generic controller machinery: work queue, controller runner, informer wrapper, leader election.
export { ChangeFilter } from './changes.ts';
export { type Clock, systemClock } from './clock.ts';
export {
  Controller,
  type ControllerMetrics,
  type ControllerOptions,
  objectKey,
  type Reconcile,
  type ReconcileOutcome,
  type ReconcileResult,
  splitKey,
} from './controller.ts';
export { apiStatusCode, errorMessage } from './errors.ts';
export {
  type CustomObject,
  customResourceSource,
  type ResourceSource,
  secretSource,
  type WatchEventType,
  type WatchedResource,
  type WatchResourceOptions,
  watchResource,
} from './informer.ts';
export { LeaderElector, type LeaderElectorOptions, type LeaderMetrics } from './lease.ts';
export { type Log, silentLog } from './log.ts';
export { type QueueGauges, type QueueMetrics, WorkQueue, type WorkQueueOptions } from './queue.ts';

// `/v1/async/<operation>`: submit a request as a job (202 with the job object at once), poll it at
// `/v1/async/<operation>/{job_id}` (202 while queued or processing, 200 once ended), cancel it while queued with
// DELETE. Only the caller that submitted a job (the same virtual key, token or user) or the admin sees it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AsyncJobParams, AsyncJobView, isOpen, jobView } from '../../async/job-view.ts';
import { type AsyncOperation, asyncOperations } from '../../async/operations.ts';
import { ownerOf } from '../../async/queue.ts';
import { RESULT_TTL_HEADER, submitJob } from '../../async/submit.ts';
import { DEFAULT_ASYNC_SETTINGS } from '../../config/async-settings.ts';
import { unifiedFormat } from '../../formats/openai/format.ts';
import { GatewayError } from '../../http/errors.ts';
import { registerUploadRoute } from '../../http/multipart.ts';
import type { RouteDoc } from '../../http/openapi.ts';
import type { Runtime } from '../../runtime.ts';
import { type JobRow, JobStore } from '../../state/services/jobs/index.ts';
import { messageOf } from '../../util/errors.ts';

type JobRequest = FastifyRequest<{ Params: { job_id: string } }>;

const TAGS = ['Async Jobs'];
/** The submission's answer names the job the poll and cancel operations take. */
const JOB_LINK = { job_id: '$response.body#/id' };
const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function submitDoc(a: AsyncOperation): RouteDoc {
  const sync = a.op.doc;
  return {
    operationId: `createAsync${a.name}`,
    summary: `Submit an async ${a.what}`,
    description:
      `Takes the body of \`POST /v1/${a.path}\` (validated the same way; streaming is refused) and answers 202 with ` +
      `the job at once. Poll \`GET /v1/async/${a.path}/{job_id}\`. The \`${RESULT_TTL_HEADER}\` header sets how ` +
      'many seconds the ended job and its result are kept (default 3600).',
    tags: TAGS,
    ...(sync.body ? { body: sync.body } : {}),
    ...(sync.bodyType ? { bodyType: sync.bodyType } : {}),
    ...(sync.bodyExamples ? { bodyExamples: sync.bodyExamples } : {}),
    responses: {
      202: {
        description: 'The job, queued',
        json: AsyncJobView,
        links: {
          [`getAsync${a.name}Job`]: { operationId: `getAsync${a.name}Job`, parameters: JOB_LINK },
          [`cancelAsync${a.name}Job`]: { operationId: `cancelAsync${a.name}Job`, parameters: JOB_LINK },
        },
      },
    },
    errors: [400, 402, 403, 404, 413, 415, 429, 503],
  };
}

function pollDoc(a: AsyncOperation, method: 'get' | 'delete'): RouteDoc {
  const get = method === 'get';
  return {
    operationId: get ? `getAsync${a.name}Job` : `cancelAsync${a.name}Job`,
    summary: get ? `Read an async ${a.what} job` : `Cancel a queued async ${a.what} job`,
    description: get
      ? 'The job’s status; once completed, `result` is the synchronous route’s answer; once failed, `error` is ' +
        'the error envelope it would have answered. 202 while queued or processing, 200 once ended; 404 for a ' +
        'job of another caller, or past its TTL.'
      : 'Cancels a job that has not started (its budget reservation is released). 409 once it is processing or ended.',
    tags: TAGS,
    params: AsyncJobParams,
    responses: get
      ? {
          200: { description: 'The job, ended', json: AsyncJobView },
          202: { description: 'The job, queued or processing', json: AsyncJobView },
        }
      : { 200: { description: 'The job, cancelled', json: AsyncJobView } },
    errors: get ? [404] : [404, 409],
  };
}

export function registerAsyncRoutes(app: FastifyInstance, rt: Runtime): void {
  const settings = rt.env.async ?? DEFAULT_ASYNC_SETTINGS;
  const jobs = new JobStore(rt.state.db);

  /** The job if this caller may see it at this path; others' jobs and other operations' are not found. */
  const visible = (row: JobRow | undefined, a: AsyncOperation, request: FastifyRequest): JobRow => {
    const mine = row && (request.principal?.kind === 'admin' || row.owner === ownerOf(request.principal));
    if (!row || !mine || row.operation !== a.path) {
      throw new GatewayError('not_found', 'no such async job (it may have expired)', { param: 'job_id' });
    }
    return row;
  };

  /** Job ids are UUIDs: anything else is not found without a query (and never reaches Postgres as text). */
  const read = (id: string) => (JOB_ID.test(id) ? jobs.get(id, new Date(rt.now())) : Promise.resolve(undefined));

  for (const a of asyncOperations(unifiedFormat)) {
    const path = `/async/${a.path}`;
    const submit = {
      method: 'POST' as const,
      url: path,
      config: { openapi: submitDoc(a) },
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const row = await submitJob(rt, jobs, settings, a, request);
        reply.code(202).header('x-gateway-request-id', request.id);
        return jobView(row);
      },
    };
    if (a.op.multipart) registerUploadRoute(app, submit);
    else app.route(submit);
    app.get(`${path}/:job_id`, { config: { openapi: pollDoc(a, 'get') } }, async (request: JobRequest, reply) => {
      const row = visible(await read(request.params.job_id), a, request);
      reply.code(isOpen(row.status) ? 202 : 200).header('x-gateway-request-id', request.id);
      return jobView(row);
    });
    app.delete(`${path}/:job_id`, { config: { openapi: pollDoc(a, 'delete') } }, async (request: JobRequest, reply) => {
      const id = request.params.job_id;
      visible(await read(id), a, request);
      const { cancelled, row } = await jobs.cancel(id, new Date(rt.now()));
      if (!row) throw new GatewayError('not_found', 'no such async job (it may have expired)', { param: 'job_id' });
      if (!cancelled) {
        throw new GatewayError('conflict', `the job is ${row.status}; only a queued job can be cancelled`);
      }
      await rt.state.counters
        .release({ requestId: id, now: rt.now(), budgets: row.reserved })
        .catch((err: unknown) => rt.logger.warn({ job_id: id, err: messageOf(err) }, 'release failed'));
      reply.header('x-gateway-request-id', request.id);
      return jobView(row);
    });
  }
}

// Fake image upstream in OpenAI's wire format (OpenAI at /v1/images/*, Azure at
// /openai/deployments/{d}/images/*, xAI and Together at /v1/images/generations): generations (JSON; GPT image
// models stream `image_generation.*` events), edits (multipart: `image` or `image[]`, `mask`; GPT image models
// stream `image_edit.*` events), variations (multipart `image`). dall-e answers carry no usage; GPT image
// answers carry token usage, size and quality, as OpenAI's do. Images are deterministic bytes naming what made them.
import type { ServerResponse } from 'node:http';
import { FakeServer, type RecordedRequest, sendJson, sendSse } from './server.ts';

export type ImagesFake = FakeServer & { lastForm(): FormData };

/** Output tokens OpenAI bills a GPT image of 1024x1024 at each quality. */
export const GPT_IMAGE_OUTPUT_TOKENS: Readonly<Record<string, number>> = { low: 272, medium: 1056, high: 4160 };

/** The bytes the fake draws: a PNG signature, then what made the image. */
export function fakeImage(what: string): Buffer {
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from(`FAKE:${what}`)]);
}

const CREATED = 1_760_000_000;

function isGptImage(model: string): boolean {
  return model.startsWith('gpt-image');
}

function answer(
  model: string,
  what: string[],
  opts: { size?: string; quality?: string; format?: string; inputTokens: number; imageTokens?: number },
) {
  const data = what.map((w, i) =>
    opts.format === 'url' && !isGptImage(model)
      ? { url: `https://images.example/${i}.png`, revised_prompt: `revised: ${w}` }
      : {
          b64_json: fakeImage(w).toString('base64'),
          ...(isGptImage(model) ? {} : { revised_prompt: `revised: ${w}` }),
        },
  );
  if (!isGptImage(model)) return { created: CREATED, data };
  const quality = opts.quality && opts.quality !== 'auto' ? opts.quality : 'medium';
  const out = (GPT_IMAGE_OUTPUT_TOKENS[quality] ?? 1056) * what.length;
  return {
    created: CREATED,
    data,
    background: 'opaque',
    output_format: 'png',
    size: opts.size && opts.size !== 'auto' ? opts.size : '1024x1024',
    quality,
    usage: {
      input_tokens: opts.inputTokens,
      output_tokens: out,
      total_tokens: opts.inputTokens + out,
      input_tokens_details: {
        text_tokens: opts.inputTokens - (opts.imageTokens ?? 0),
        image_tokens: opts.imageTokens ?? 0,
      },
    },
  };
}

async function stream(
  res: ServerResponse,
  kind: 'image_generation' | 'image_edit',
  model: string,
  what: string,
  partials: number,
  quality: string | undefined,
): Promise<void> {
  const base = {
    created_at: CREATED,
    size: '1024x1024',
    quality: quality ?? 'medium',
    background: 'opaque',
    output_format: 'png',
  };
  const events: { event: string; data: unknown }[] = [];
  for (let i = 0; i < partials; i++) {
    const type = `${kind}.partial_image`;
    events.push({
      event: type,
      data: { type, ...base, partial_image_index: i, b64_json: fakeImage(`${what}#partial${i}`).toString('base64') },
    });
  }
  const done = answer(model, [what], { quality, inputTokens: 12 });
  const type = `${kind}.completed`;
  events.push({
    event: type,
    data: {
      type,
      ...base,
      b64_json: fakeImage(what).toString('base64'),
      usage: 'usage' in done ? done.usage : undefined,
    },
  });
  await sendSse(res, events, { gapMs: 5 });
}

async function readForm(req: RecordedRequest): Promise<FormData> {
  const type = String(req.headers['content-type'] ?? '');
  return new Response(new Uint8Array(req.body), { headers: { 'content-type': type } }).formData();
}

/** Which model the call is for: the body's, or an Azure deployment's name. */
function modelOf(req: RecordedRequest, bodyModel: unknown): string {
  const deployment = /\/deployments\/([^/]+)\//.exec(req.path)?.[1];
  return deployment ? decodeURIComponent(deployment) : String(bodyModel ?? '');
}

export function createImagesFake(): ImagesFake {
  let form: FormData | undefined;
  const server = new FakeServer([
    {
      method: 'POST',
      path: /\/images\/generations$/,
      handler: async (req, res) => {
        const body = req.json as Record<string, unknown>;
        const model = modelOf(req, body['model']);
        const n = Number(body['n'] ?? 1);
        const prompt = String(body['prompt']);
        const what = Array.from({ length: n }, (_, i) => `${model}:${prompt}:${i}`);
        if (body['stream'] === true) {
          await stream(
            res,
            'image_generation',
            model,
            what[0]!,
            Number(body['partial_images'] ?? 0),
            body['quality'] as string,
          );
          return;
        }
        const opts = {
          size: body['size'] as string,
          quality: body['quality'] as string,
          format: body['response_format'] as string,
        };
        sendJson(res, 200, answer(model, what, { ...opts, inputTokens: Math.ceil(prompt.length / 4) }));
      },
    },
    {
      method: 'POST',
      path: /\/images\/(edits|variations)$/,
      handler: async (req, res) => {
        form = await readForm(req);
        const model = modelOf(req, form.get('model'));
        const files = [...form.getAll('image'), ...form.getAll('image[]')].filter((f): f is File => f instanceof File);
        const mask = form.get('mask');
        const sizes = files.map((f) => f.size).join('+');
        const maskNote = mask instanceof File ? `:mask${mask.size}` : '';
        const n = Number(form.get('n') ?? 1);
        const edit = req.path.endsWith('/edits');
        const what = Array.from({ length: n }, (_, i) =>
          edit
            ? `${model}:edit:${String(form?.get('prompt'))}:${sizes}${maskNote}:${i}`
            : `${model}:variation:${sizes}:${i}`,
        );
        if (edit && form.get('stream') === 'true') {
          await stream(
            res,
            'image_edit',
            model,
            what[0]!,
            Number(form.get('partial_images') ?? 0),
            form.get('quality') as string,
          );
          return;
        }
        const opts = {
          size: form.get('size') as string,
          quality: form.get('quality') as string,
          format: form.get('response_format') as string,
        };
        // 20 text tokens of prompt, 65 image tokens per source image (among the input tokens, as OpenAI counts).
        const imageTokens = 65 * files.length;
        sendJson(res, 200, answer(model, what, { ...opts, inputTokens: 20 + imageTokens, imageTokens }));
      },
    },
  ]);
  return Object.assign(server, {
    lastForm: (): FormData => {
      if (!form) throw new Error('the images fake received no form');
      return form;
    },
  });
}

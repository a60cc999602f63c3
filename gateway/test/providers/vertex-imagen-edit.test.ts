// OpenAI's edit request as Imagen's `:predict` body (pure): which edit mode and references each shape of request
// becomes, Google's own fields taken from form strings or JSON, and the 400s for what Imagen cannot take.
import { describe, expect, it } from 'vitest';
import { rgbaMask, rgbImage } from '../../../test/fakes/png.ts';
import { imagenEditBody } from '../../src/providers/vertex/imagen-edit.ts';
import { type ImageEditRequest, ImageUpload } from '../../src/schemas/images.ts';

const png = (data: Buffer, name = 'a.png') => new ImageUpload(name, 'image/png', data);
const SOURCE = png(rgbImage(4, 4));

function edit(over: Partial<ImageEditRequest> = {}, extra: Record<string, unknown> = {}): ImageEditRequest {
  return { model: 'imagen-3.0-capability-001', prompt: 'p', images: [SOURCE], stream: false, extra, ...over };
}

async function body(req: ImageEditRequest) {
  const r = await imagenEditBody(req);
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

async function error(req: ImageEditRequest) {
  const r = await imagenEditBody(req);
  expect(r.ok).toBe(false);
  return r.ok ? '' : r.error;
}

describe('imagenEditBody', () => {
  it('sends an image alone as a mask-free edit (no editMode), n as sampleCount', async () => {
    const b = await body(edit({ n: 3 }));
    expect(b.parameters).toEqual({ sampleCount: 3, includeRaiReason: true });
    expect(b.instances[0].referenceImages).toHaveLength(1);
  });

  it('converts an OpenAI mask and inpaints with it', async () => {
    const b = await body(
      edit({
        mask: png(
          rgbaMask(4, 4, (x) => x === 0),
          'm.png',
        ),
      }),
    );
    expect(b.parameters['editMode']).toBe('EDIT_MODE_INPAINT_INSERTION');
    const mask = b.instances[0].referenceImages[1] as { referenceImage: { bytesBase64Encoded: string } };
    // Re-encoded as an 8-bit grayscale PNG (colour type 0), not the RGBA the caller sent.
    expect(Buffer.from(mask.referenceImage.bytesBase64Encoded, 'base64')[25]).toBe(0);
  });

  it('passes a jpeg mask as sent (Imagen’s convention)', async () => {
    const jpeg = new ImageUpload('m.jpg', 'image/jpeg', Buffer.from('jpeg bytes'));
    const b = await body(edit({ mask: jpeg }));
    expect(b.instances[0].referenceImages[1]).toMatchObject({
      referenceImage: { bytesBase64Encoded: Buffer.from('jpeg bytes').toString('base64'), mimeType: 'image/jpeg' },
    });
  });

  it('takes Google’s fields from form strings and JSON alike, under either spelling', async () => {
    const form = await body(
      edit({}, { mask_mode: 'MASK_MODE_FOREGROUND', mask_dilation: '0.2', base_steps: '40', add_watermark: 'false' }),
    );
    const json = await body(
      edit({}, { maskMode: 'MASK_MODE_FOREGROUND', maskDilation: 0.2, baseSteps: 40, addWatermark: false }),
    );
    expect(form).toEqual(json);
    expect(json.parameters).toEqual({
      sampleCount: 1,
      includeRaiReason: true,
      editMode: 'EDIT_MODE_INPAINT_INSERTION',
      editConfig: { baseSteps: 40 },
      addWatermark: false,
    });
    expect(json.instances[0].referenceImages[1]).toEqual({
      referenceType: 'REFERENCE_TYPE_MASK',
      referenceId: 2,
      maskImageConfig: { maskMode: 'MASK_MODE_FOREGROUND', dilation: 0.2 },
    });
  });

  it('writes jpeg with a compression quality when asked', async () => {
    const b = await body(edit({}, { output_format: 'jpeg', output_compression: '80' }));
    expect(b.parameters['outputOptions']).toEqual({ mimeType: 'image/jpeg', compressionQuality: 80 });
  });

  it('refuses what Imagen cannot take, naming the field', async () => {
    const mask = png(
      rgbaMask(4, 4, () => true),
      'm.png',
    );
    const cases: [ImageEditRequest, string][] = [
      [edit({ n: 5 }), 'n: Imagen makes at most 4'],
      [edit({ images: [png(Buffer.alloc(10 * 1024 * 1024 + 1))] }), 'image: Imagen takes images up to 10 MB'],
      [edit({ mask: png(Buffer.alloc(10 * 1024 * 1024 + 1)) }), 'mask: Imagen takes images up to 10 MB'],
      [edit({ images: [SOURCE, SOURCE] }), 'image: Imagen edits one image'],
      [
        edit({ images: [new ImageUpload('a.gif', 'image/gif', Buffer.from('x'))] }),
        'image: Imagen edits take png or jpeg',
      ],
      [edit({ mask }, { maskMode: 'MASK_MODE_BACKGROUND' }), 'mask: an uploaded mask and maskMode'],
      [edit({}, { maskMode: 'MASK_MODE_USER_PROVIDED' }), 'needs a mask'],
      [edit({}, { editMode: 'EDIT_MODE_INPAINT_REMOVAL' }), 'needs a mask'],
      [edit({}, { maskMode: 'MASK_MODE_SEMANTIC' }), 'maskClasses: MASK_MODE_SEMANTIC needs'],
      [edit({ mask }, { maskClasses: '1' }), 'maskClasses: only with maskMode MASK_MODE_SEMANTIC'],
      [edit({}, { maskDilation: '0.1' }), 'maskDilation: only with a mask'],
      [edit({ mask }, { maskDilation: '2' }), 'maskDilation: must be a number from 0 to 1'],
      [edit({}, { baseSteps: 'many' }), 'baseSteps: must be an integer'],
      [edit({}, { seed: '-1' }), 'seed: must be an integer'],
      [edit({}, { output_format: 'webp' }), 'output_format: Imagen writes png or jpeg'],
      [edit({}, { output_compression: '50' }), 'output_compression: only with output_format jpeg'],
      [
        edit({
          mask: png(
            Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 13, 10, 26, 10]), Buffer.from('broken')]),
            'm.png',
          ),
        }),
        'mask: the PNG',
      ],
    ];
    for (const [req, message] of cases) expect(await error(req), message).toContain(message);
  });
});

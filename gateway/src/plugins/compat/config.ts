// The compat plugin's settings (1.5.0 breaking change 8: three switches replace `enable_litellm_fallbacks`).
import { z } from 'zod';

export const CompatConfig = z.strictObject({
  /** A text completion for a chat-only model is sent as a chat request and answered as a text completion. */
  convert_text_to_chat: z.boolean().default(false),
  /** A chat request for a Responses-only model goes through the Responses API and is answered as chat. */
  convert_chat_to_responses: z.boolean().default(false),
  /** Parameters the target provider or model does not accept are dropped instead of failing the request. */
  should_drop_params: z.boolean().default(false),
});
export type CompatConfig = z.infer<typeof CompatConfig>;

export const COMPAT_REMOVED: Record<string, string> = {
  enable_litellm_fallbacks:
    'enable_litellm_fallbacks was removed in 1.5.0: use convert_text_to_chat, convert_chat_to_responses and should_drop_params',
};

// The compat plugin: wraps the chat and text completion operations so each attempt (each candidate of the
// fallback chain) is converted or trimmed for its own provider and model. Other operations pass unchanged.
import { chatOp, type OperationSpec, textCompletionOp } from '../../engine/operations.ts';
import { ProviderError } from '../../providers/errors.ts';
import type { CallContext } from '../../providers/types.ts';
import type { ChatChunk, ChatRequest, ChatResponse } from '../../schemas/chat.ts';
import type { TextCompletionRequest, TextCompletionResponse } from '../../schemas/completions.ts';
import { chatToResponsesRequest, responsesStreamToChat, responsesToChatResponse } from './chat-to-responses.ts';
import type { CompatConfig } from './config.ts';
import { dropUnsupported, isChatOnly, isResponsesOnly } from './models.ts';
import { chatStreamToText, chatToTextResponse, textToChatRequest } from './text-to-chat.ts';

type ChatSpec = OperationSpec<ChatRequest, ChatResponse, ChatChunk>;
type TextSpec = OperationSpec<TextCompletionRequest, TextCompletionResponse, TextCompletionResponse>;

/** True when the settings change anything. */
export function compatActive(cfg: CompatConfig): boolean {
  return cfg.convert_text_to_chat || cfg.convert_chat_to_responses || cfg.should_drop_params;
}

/** The operation as the compat settings run it (the same object when they change nothing for it). */
export function compatOperation<Req, Res, Chunk>(
  spec: OperationSpec<Req, Res, Chunk>,
  cfg: CompatConfig,
): OperationSpec<Req, Res, Chunk> {
  // Identity checks: a spec that is chatOp (textCompletionOp) has chat's (text's) type parameters.
  if ((spec as unknown) === chatOp && (cfg.convert_chat_to_responses || cfg.should_drop_params)) {
    return chatSpec(cfg) as unknown as OperationSpec<Req, Res, Chunk>;
  }
  if ((spec as unknown) === textCompletionOp && cfg.convert_text_to_chat) {
    return textSpec(cfg) as unknown as OperationSpec<Req, Res, Chunk>;
  }
  return spec;
}

function unsupported(ctx: CallContext, what: string): ProviderError {
  return new ProviderError('unsupported_operation', `${ctx.provider} has no ${what} API for ${ctx.model}`);
}

function trimmed(cfg: CompatConfig, req: ChatRequest, ctx: CallContext): ChatRequest {
  return cfg.should_drop_params ? dropUnsupported(ctx.provider, ctx.model, req).req : req;
}

function chatSpec(cfg: CompatConfig): ChatSpec {
  const viaResponses = (ctx: CallContext, has: boolean) =>
    cfg.convert_chat_to_responses && has && isResponsesOnly(ctx.provider, ctx.model);
  return {
    ...chatOp,
    unary: (a) => {
      const chat = a.chat?.bind(a);
      const responses = a.responses?.bind(a);
      if (!chat && !responses) return undefined;
      return async (req, ctx) => {
        if (responses && viaResponses(ctx, true)) {
          return responsesToChatResponse(await responses(chatToResponsesRequest(req, cfg.should_drop_params), ctx));
        }
        if (!chat) throw unsupported(ctx, 'chat');
        return chat(trimmed(cfg, req, ctx), ctx);
      };
    },
    stream: (a) => {
      const chat = a.chatStream?.bind(a);
      const responses = a.responsesStream?.bind(a);
      if (!chat && !responses) return undefined;
      return async (req, ctx) => {
        if (responses && viaResponses(ctx, true)) {
          const events = await responses(chatToResponsesRequest(req, cfg.should_drop_params), ctx);
          return responsesStreamToChat(events, req.stream_options?.include_usage === true);
        }
        if (!chat) throw unsupported(ctx, 'chat');
        return chat(trimmed(cfg, req, ctx), ctx);
      };
    },
  };
}

function textSpec(cfg: CompatConfig): TextSpec {
  return {
    ...textCompletionOp,
    unary: (a) => {
      const text = a.textCompletion?.bind(a);
      const chat = a.chat?.bind(a);
      if (!text && !chat) return undefined;
      return async (req, ctx) => {
        if (chat && isChatOnly(ctx.provider, ctx.model, text !== undefined)) {
          return chatToTextResponse(await chat(trimmed(cfg, textToChatRequest(req), ctx), ctx));
        }
        if (!text) throw unsupported(ctx, 'text completions');
        return text(req, ctx);
      };
    },
    stream: (a) => {
      const text = a.textCompletionStream?.bind(a);
      const chat = a.chatStream?.bind(a);
      if (!text && !chat) return undefined;
      return async (req, ctx) => {
        if (chat && isChatOnly(ctx.provider, ctx.model, text !== undefined)) {
          return chatStreamToText(await chat(trimmed(cfg, textToChatRequest(req), ctx), ctx));
        }
        if (!text) throw unsupported(ctx, 'text completions');
        return text(req, ctx);
      };
    },
  };
}

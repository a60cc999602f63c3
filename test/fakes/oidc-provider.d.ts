// The part of `oidc-provider` (9.x, shipped without type declarations; @types/oidc-provider is not installed) that
// the test OAuth server (oauth-server.ts) uses.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export type ClientMetadata = Record<string, unknown> & {
    client_id: string;
    client_secret?: string;
    redirect_uris?: string[];
    grant_types?: string[];
    response_types?: string[];
    token_endpoint_auth_method?: string;
  };

  export interface Client {
    clientId: string;
    clientAuthMethod: string;
    grantTypeAllowed(type: string): boolean;
  }

  export interface Interaction {
    uid: string;
  }

  export interface InteractionDetails {
    uid: string;
    prompt: { name: string; details: Record<string, unknown> };
    params: Record<string, unknown>;
    session?: { accountId?: string } | undefined;
    grantId?: string | undefined;
  }

  export interface Configuration {
    clients?: ClientMetadata[];
    scopes?: string[];
    clientDefaults?: Record<string, unknown>;
    clientAuthMethods?: string[];
    cookies?: { keys?: string[] };
    features?: Record<string, { enabled: boolean } & Record<string, unknown>>;
    pkce?: { required?: (ctx: unknown, client: Client) => boolean };
    issueRefreshToken?: (ctx: unknown, client: Client, code: unknown) => Promise<boolean> | boolean;
    rotateRefreshToken?: boolean;
    ttl?: Record<string, number>;
    interactions?: { url?: (ctx: unknown, interaction: Interaction) => string };
    findAccount?: (
      ctx: unknown,
      sub: string,
    ) => Promise<{ accountId: string; claims: () => Promise<Record<string, unknown>> }>;
  }

  export interface Grant {
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
    destroy(): Promise<void>;
  }

  interface TokenModel {
    clientId?: string;
    accountId?: string;
    scopes: Set<string>;
    isExpired: boolean;
  }

  interface TokenClass {
    find(value: string): Promise<TokenModel | undefined>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    Grant: {
      new (props: { accountId: string; clientId: string }): Grant;
      find(id: string): Promise<Grant | undefined>;
    };
    AccessToken: TokenClass;
    RefreshToken: TokenClass;
  }
}

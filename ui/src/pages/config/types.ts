// GET /api/config and /api/proxy-config (docs/api: getConfig, ProxyConfig).
export interface ClientConfig {
  enforce_auth_on_inference: boolean;
  max_request_body_size_mb: number;
  max_file_upload_size_mb: number;
  allowed_origins: string[];
  session_stickiness_ttl_seconds: number;
  log_retention_days: number;
  mcp_external_client_url?: string;
}

export interface ProxyConfig {
  enabled: boolean;
  type: 'http' | 'socks5' | 'tcp';
  url: string;
  username: string;
  /** Redacted. */
  password: string;
  no_proxy: string;
  timeout: number;
  skip_tls_verify: boolean;
  enable_for_inference: boolean;
  enable_for_api: boolean;
  enable_for_scim: boolean;
}

export interface ConfigView {
  client_config: ClientConfig;
  proxy_config: ProxyConfig;
  is_db_connected: boolean;
  is_cache_connected: boolean;
  is_logs_connected: boolean;
  restart_required: { required: boolean };
}

export const configKey = ['config'] as const;

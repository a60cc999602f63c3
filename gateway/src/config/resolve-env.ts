// `env.NAME` string values in config.json are replaced by the environment variable NAME.

export type ResolveResult = { ok: true; value: unknown } | { ok: false; error: string };

const ENV_REF = /^env\.([A-Za-z_][A-Za-z0-9_]*)$/;

export function resolveEnvRefs(value: unknown, env: Record<string, string | undefined>, path = ''): ResolveResult {
  if (typeof value === 'string') {
    const m = ENV_REF.exec(value);
    if (!m) return { ok: true, value };
    const name = m[1]!;
    const v = env[name];
    if (v === undefined || v === '') {
      return { ok: false, error: `${path || '(root)'}: environment variable ${name} is not set` };
    }
    return { ok: true, value: v };
  }
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (let i = 0; i < value.length; i++) {
      const r = resolveEnvRefs(value[i], env, `${path}[${i}]`);
      if (!r.ok) return r;
      out.push(r.value);
    }
    return { ok: true, value: out };
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const r = resolveEnvRefs(v, env, path ? `${path}.${k}` : k);
      if (!r.ok) return r;
      out[k] = r.value;
    }
    return { ok: true, value: out };
  }
  return { ok: true, value };
}

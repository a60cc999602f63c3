// The reference client settings with a behaviour since 1.5.0 (config/reference-client.ts) in config.json and in
// the 1.4 upgrade's client-settings mapping: defaults, ranges, and the deprecated enforce_governance_header alias.
import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../src/config/load.ts';
import { planClientConfig } from '../../src/state/upgrade/plan/client.ts';
import { Notes } from '../../src/state/upgrade/plan/notes.ts';

const file = (client: Record<string, unknown>) => parseConfigFile(JSON.stringify({ client }), {});

describe('config.json client settings', () => {
  it('defaults: a loop of 10 model calls, 60 s per tool call, no header filter, no warning', () => {
    const cfg = file({});
    expect(cfg.client).toMatchObject({
      mcp_agent_depth: 10,
      mcp_tool_execution_timeout: 60,
      header_filter_config: { allowlist: [], denylist: [] },
    });
    expect(cfg.warnings).toBeUndefined();
  });

  it('takes the settings, header names lower-cased', () => {
    const cfg = file({
      mcp_agent_depth: 4,
      mcp_tool_execution_timeout: 5,
      header_filter_config: { allowlist: ['X-Team'], denylist: ['X-Trace'] },
    });
    expect(cfg.client).toMatchObject({
      mcp_agent_depth: 4,
      mcp_tool_execution_timeout: 5,
      header_filter_config: { allowlist: ['x-team'], denylist: ['x-trace'] },
    });
  });

  it('refuses out-of-range values naming the field', () => {
    expect(() => file({ mcp_agent_depth: 0 })).toThrow(/client\.mcp_agent_depth/);
    expect(() => file({ mcp_tool_execution_timeout: 601 })).toThrow(/client\.mcp_tool_execution_timeout/);
    expect(() => file({ header_filter_config: { allowlist: ['a b'] } })).toThrow(/client\.header_filter_config/);
  });

  it('enforce_governance_header alone sets enforce_auth_on_inference, with a warning; beside it, it loses', () => {
    const alone = file({ enforce_governance_header: false });
    expect(alone.client.enforce_auth_on_inference).toBe(false);
    expect(alone.client).not.toHaveProperty('enforce_governance_header');
    expect(alone.warnings).toEqual([expect.stringContaining('enforce_governance_header is deprecated')]);
    expect(file({ enforce_governance_header: false, enforce_auth_on_inference: true }).client).toMatchObject({
      enforce_auth_on_inference: true,
    });
    expect(() => file({ enforce_governance_header: 'no' })).toThrow(/client\.enforce_governance_header/);
  });
});

describe('1.4 upgrade: client settings', () => {
  it('carries the MCP depth and timeout, the header filter, and the governance header as the auth switch', () => {
    const notes = new Notes();
    const cfg = planClientConfig(
      {
        enforce_auth_on_inference: null,
        enforce_governance_header: 'f',
        mcp_agent_depth: '5',
        mcp_tool_execution_timeout: '30',
        header_filter_config_json: '{"allowlist":["X-Team"],"denylist":[]}',
      },
      notes,
    );
    expect(cfg).toMatchObject({
      enforce_auth_on_inference: false,
      mcp_agent_depth: 5,
      mcp_tool_execution_timeout: 30,
      header_filter_config: { allowlist: ['x-team'], denylist: [] },
    });
    expect(notes.report.filter((r) => r.level === 'warn')).toEqual([]);
  });

  it('a value out of today’s range stays at its default, named, without taking the other settings with it', () => {
    const notes = new Notes();
    const cfg = planClientConfig(
      {
        enforce_auth_on_inference: 't',
        mcp_agent_depth: '500',
        mcp_tool_execution_timeout: '30',
        log_retention_days: 7,
      },
      notes,
    );
    expect(cfg).toMatchObject({ mcp_agent_depth: 10, mcp_tool_execution_timeout: 30, log_retention_days: 7 });
    expect(notes.report).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        change: expect.stringContaining('mcp_agent_depth left at its default'),
      }),
    );
  });
});

// Every page of the dashboard, in navigation order. A page is one entry here: its path under /ui/, the label in
// the navigation, and its component (lazy, so each page is its own chunk).
import { type ComponentType, type LazyExoticComponent, lazy } from 'react';

export interface PageEntry {
  /** Path under /ui/ (no leading slash); child routes of a page go in the page itself (`providers/*`). */
  path: string;
  /** Navigation label. */
  label: string;
  component: LazyExoticComponent<ComponentType>;
}

export const pages: PageEntry[] = [
  { path: 'providers', label: 'Providers & keys', component: lazy(() => import('./providers/ProvidersPage.tsx')) },
  { path: 'virtual-keys', label: 'Virtual keys', component: lazy(() => import('./virtual-keys/VirtualKeysPage.tsx')) },
  { path: 'teams', label: 'Teams', component: lazy(() => import('./teams/TeamsPage.tsx')) },
  { path: 'customers', label: 'Customers', component: lazy(() => import('./customers/CustomersPage.tsx')) },
  {
    path: 'routing-rules',
    label: 'Routing rules',
    component: lazy(() => import('./routing-rules/RoutingRulesPage.tsx')),
  },
  { path: 'pricing', label: 'Pricing overrides', component: lazy(() => import('./pricing/PricingPage.tsx')) },
  {
    path: 'model-configs',
    label: 'Model & provider limits',
    component: lazy(() => import('./model-configs/ModelConfigsPage.tsx')),
  },
  { path: 'logs', label: 'Logs', component: lazy(() => import('./logs/LogsPage.tsx')) },
  { path: 'mcp', label: 'MCP clients', component: lazy(() => import('./mcp/McpPage.tsx')) },
  // Not "MCP logs": a search for the link named "Logs" (a screen reader's, a browser test's) would find both.
  { path: 'mcp-logs', label: 'MCP tool calls', component: lazy(() => import('./mcp-logs/McpLogsPage.tsx')) },
  { path: 'plugins', label: 'Plugins & cache', component: lazy(() => import('./plugins/PluginsPage.tsx')) },
  { path: 'config', label: 'Config', component: lazy(() => import('./config/ConfigPage.tsx')) },
];

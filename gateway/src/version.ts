// The release of the specification this gateway implements (its "Versioning" section): reported by
// GET /api/version, the MCP server's and clients' implementation info, and the telemetry resource.
export const GATEWAY_VERSION = '1.5.0';

/**
 * The Node 22 that tools needing it run on (the MCP conformance suite, mcp-remote, the MCP
 * Inspector 2.x) while the service and its tests run on Node 20: the `node` package of the npm
 * registry, fetched once through npx. One pin for all of them.
 */
export const NODE_22 = "node@22.23.3";

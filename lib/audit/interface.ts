/**
 * The interface a line of the audit trail names: a face (REST, MCP, Foxglove), or `websocket`, a WebSocket route of
 * the HTTP face (the jog socket, GET /robot/jog): its calls are a REST operation's, but not REST requests.
 */
export type AuditInterface = 'rest' | 'mcp' | 'foxglove' | 'websocket';

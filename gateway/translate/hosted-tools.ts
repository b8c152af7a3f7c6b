// Responses API built-in tools that OpenAI runs on its side (web search, file search, code interpreter, image
// generation, remote MCP): only an upstream that speaks the Responses API can run them. For any other target the
// route's hostedTools setting decides: `drop` (the default) leaves them out of the upstream request, so a client
// that offers them by default (Codex CLI's web_search, the Agents SDK's hosted tools) is served with the tools the
// model can run; `reject` refuses the call (400). A tool_choice that forces one is refused either way: the client
// asked for that tool to run. Client-run tools (function, custom, computer use, local shell) are not in this list.
import type { CompiledModel } from '../contract/snapshot.ts';
import { isObject } from './json-read.ts';

export type HostedToolsMode = 'drop' | 'reject';

const HOSTED = new Set(['file_search', 'code_interpreter', 'image_generation', 'mcp']);

/** web_search and its dated and preview variants (web_search_preview, web_search_2025_08_26, ...). */
export function isHostedTool(type: unknown): type is string {
  return typeof type === 'string' && (HOSTED.has(type) || type === 'web_search' || type.startsWith('web_search_'));
}

/** The hosted tool a tool_choice forces ({type: "web_search"}, {type: "mcp", server_label}), if any. */
export function forcedHostedTool(choice: unknown): string | null {
  return isObject(choice) && isHostedTool(choice.type) ? choice.type : null;
}

export function hostedToolsMode(model: CompiledModel | undefined): HostedToolsMode {
  return model?.hostedTools === 'reject' ? 'reject' : 'drop';
}

// The kind of a call, from its usage event's endpoint: what the usage page, the statement and the spend dashboards
// tell apart, each with its unit (a rerank's output count is search units, not tokens). The rollup (usage_daily.kind)
// stores the same value, computed by KIND_SQL from usage_events.endpoint.
import type { Endpoint } from './event.ts';

export type Kind = 'chat' | 'embeddings' | 'completions' | 'rerank' | 'moderation' | 'image' | 'transcription' | 'speech' | 'mcp';

export const KINDS: readonly Kind[] = ['chat', 'embeddings', 'completions', 'rerank', 'moderation', 'image', 'transcription', 'speech', 'mcp'];

/** How a kind is named to users; '' is a rollup row written before kinds were recorded. */
export const KIND_LABELS: Record<Kind | '', string> = {
  chat: 'Chat',
  embeddings: 'Embeddings',
  completions: 'Text completions',
  rerank: 'Rerank',
  moderation: 'Moderation',
  image: 'Images',
  transcription: 'Transcriptions',
  speech: 'Speech',
  mcp: 'MCP tool calls',
  '': '(not recorded)',
};

export function kindOf(endpoint: Endpoint): Kind {
  switch (endpoint) {
    case 'embeddings':
    case 'completions':
    case 'rerank':
    case 'mcp':
      return endpoint;
    case 'moderations':
      return 'moderation';
    case 'images.generations':
    case 'images.edits':
      return 'image';
    case 'audio.transcriptions':
    case 'audio.translations':
      return 'transcription';
    case 'audio.speech':
      return 'speech';
    case 'chat.completions':
    case 'messages':
    case 'count_tokens':
    case 'responses':
      return 'chat';
    default: {
      const never: never = endpoint;
      return never;
    }
  }
}

/** kindOf in SQL, over a row with an `endpoint` column. */
export const KIND_SQL = `CASE endpoint WHEN 'embeddings' THEN 'embeddings' WHEN 'completions' THEN 'completions' WHEN 'rerank' THEN 'rerank'
         WHEN 'moderations' THEN 'moderation' WHEN 'images.generations' THEN 'image' WHEN 'images.edits' THEN 'image'
         WHEN 'audio.transcriptions' THEN 'transcription' WHEN 'audio.translations' THEN 'transcription' WHEN 'audio.speech' THEN 'speech'
         WHEN 'mcp' THEN 'mcp' ELSE 'chat' END`;

/** A rerank's output count is search units; every other kind's is output tokens. */
export const isSearchUnits = (kind: string): boolean => kind === 'rerank';

// gen_ai.provider.name (OpenTelemetry GenAI semantic conventions) of each provider kind: the convention's
// well-known value where one exists, a name of ours under svc.* otherwise. Spans and the GenAI metrics use it.
import type { CompiledTarget } from './snapshot.ts';

const NAMES: Record<CompiledTarget['provider'], string> = {
  openai: 'openai',
  anthropic: 'anthropic',
  mock: 'svc.mock',
  bedrock: 'aws.bedrock',
  'azure-openai': 'azure.ai.openai',
  vertex: 'gcp.vertex_ai',
  gemini: 'gcp.gemini',
};

export function genAiProviderName(provider: CompiledTarget['provider']): string {
  return NAMES[provider];
}

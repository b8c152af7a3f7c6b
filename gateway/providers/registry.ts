// Provider registry: one instance per provider kind, chosen by an exhaustive switch.
import type { ProviderKind } from '../../crds/schema/index.ts';
import { AnthropicProvider } from './anthropic/index.ts';
import { AzureOpenAIProvider } from './azure-openai/index.ts';
import { GeminiApiProvider } from './google/gemini-api.ts';
import { VertexProvider } from './google/vertex.ts';
import { BedrockProvider } from './bedrock/index.ts';
import { MockProvider } from './mock/index.ts';
import { OpenAIProvider } from './openai/index.ts';
import type { Provider } from './types.ts';

export class ProviderRegistry {
  private readonly providers = new Map<ProviderKind, Provider>();
  get(kind: ProviderKind): Provider {
    let p = this.providers.get(kind);
    if (!p) {
      p = this.create(kind);
      this.providers.set(kind, p);
    }
    return p;
  }

  private create(kind: ProviderKind): Provider {
    switch (kind) {
      case 'openai':
        return new OpenAIProvider();
      case 'mock':
        return new MockProvider();
      case 'anthropic':
        return new AnthropicProvider();
      case 'bedrock':
        return new BedrockProvider();
      case 'azure-openai':
        return new AzureOpenAIProvider();
      case 'vertex':
        return new VertexProvider();
      case 'gemini':
        return new GeminiApiProvider();
      default: {
        const never: never = kind;
        throw new Error(`unknown provider ${String(never)}`);
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.providers.values()].map((p) => p.close()));
  }
}

// Provider registry: one instance per provider kind, chosen by an exhaustive switch.
import type { ProviderKind } from '../../crds/schema/index.ts';
import { AnthropicProvider } from './anthropic/index.ts';
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

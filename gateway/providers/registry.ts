// Provider registry: one instance per provider kind, chosen by an exhaustive switch.
import type { ProviderKind } from '../../crds/schema/index.ts';
import { AnthropicProvider } from './anthropic/index.ts';
import { BedrockProvider } from './bedrock/index.ts';
import { MockProvider } from './mock/index.ts';
import { OpenAIProvider } from './openai/index.ts';
import type { Provider, UpstreamOutcome } from './types.ts';
import { UpstreamFailure } from './types.ts';

/** A cloud kind whose provider is not built yet: every attempt fails over with a clear reason. */
class UnbuiltProvider implements Provider {
  readonly protocol = 'openai' as const;
  private readonly kind: string;
  constructor(kind: string) {
    this.kind = kind;
  }
  send(): Promise<UpstreamOutcome> {
    return Promise.reject(new UpstreamFailure('connect_error', `provider ${this.kind} is not available in this build`));
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

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
      case 'vertex':
      case 'gemini':
        return new UnbuiltProvider(kind);
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

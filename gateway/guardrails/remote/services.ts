// The service module of each remote check kind: one exhaustive switch.
import type { CompiledRemoteCheck } from '../../contract/snapshot.ts';
import { azureContentSafety } from './azure-content-safety.ts';
import { bedrock } from './bedrock.ts';
import { modelArmor } from './model-armor.ts';
import { openaiModeration } from './openai-moderation.ts';
import type { Service } from './types.ts';
import { webhook } from './webhook.ts';

export function serviceOf(c: CompiledRemoteCheck): Service {
  const kind = c.service.kind;
  switch (kind) {
    case 'bedrock':
      return bedrock;
    case 'azure-content-safety':
      return azureContentSafety;
    case 'openai-moderation':
      return openaiModeration;
    case 'model-armor':
      return modelArmor;
    case 'webhook':
      return webhook;
    default: {
      const never: never = kind;
      return never;
    }
  }
}

// Step 2: which model the call may use: known, of the right type, open to the plan and the key's whitelist.
import { keyAllows, planAllows } from '../contract/model-match.ts';
import { entryOf, type CompiledAccount, type CompiledModel, type CompiledPlan, type KeyRecord, type Snapshot } from '../contract/snapshot.ts';
import { GatewayError } from '../errors/catalog.ts';

export interface Principal {
  key: KeyRecord;
  account: CompiledAccount;
  plan: CompiledPlan;
}

export function principal(snapshot: Snapshot, key: KeyRecord): Principal {
  const account = entryOf(snapshot.accounts, key.account);
  const plan = account ? entryOf(snapshot.plans, account.plan) : undefined;
  if (!account || !plan) throw new GatewayError('invalid_api_key', 'This API key belongs to no active account.');
  return { key, account, plan };
}

export function mayUse(p: Principal, model: CompiledModel): boolean {
  return planAllows(p.plan, model) && keyAllows(p.key, model.id);
}

/** The endpoints of each kind of model, as a refusal names them. */
const SERVED_AT: Record<CompiledModel['type'], string> = {
  chat: '/v1/chat/completions, /v1/responses and /anthropic/v1/messages',
  embeddings: '/v1/embeddings',
  completions: '/v1/completions',
  rerank: '/v1/rerank',
  moderation: '/v1/moderations',
  image: '/v1/images/generations and /v1/images/edits',
  transcription: '/v1/audio/transcriptions and /v1/audio/translations',
  speech: '/v1/audio/speech',
};

function wrongType(modelId: string, has: CompiledModel['type'], wanted: CompiledModel['type']): string {
  const base = `The model ${modelId} is a${has === 'embeddings' || has === 'image' ? 'n' : ''} ${has} model (served at ${SERVED_AT[has]}) and cannot serve this endpoint.`;
  // Legacy completions are not translated to chat: a prompt with echo, logprobs of the prompt and best_of have no
  // faithful chat equivalent, so a chat model is refused rather than answered differently than its caller expects.
  return wanted === 'completions' && has === 'chat' ? `${base} Chat models are not translated to text completions: call /v1/chat/completions.` : base;
}

/** The requested model, then the fallbacks the caller may use, in order. */
export function resolveChain(snapshot: Snapshot, p: Principal, modelId: string, type: CompiledModel['type']): CompiledModel[] {
  const model = entryOf(snapshot.models, modelId);
  if (!model)
    throw new GatewayError('model_not_found', `The model ${JSON.stringify(modelId)} does not exist. GET /v1/models lists the models.`, { param: 'model' });
  if (model.type !== type) throw new GatewayError('invalid_request', wrongType(modelId, model.type, type), { param: 'model' });
  if (!planAllows(p.plan, model))
    throw new GatewayError('model_not_allowed', `The ${p.plan.name} plan does not include the model ${modelId}.`, { param: 'model' });
  if (!keyAllows(p.key, model.id)) throw new GatewayError('model_not_allowed', `This API key may not use the model ${modelId}.`, { param: 'model' });
  const chain = [model];
  for (const id of model.fallbacks) {
    const f = entryOf(snapshot.models, id);
    if (f && f.type === type && mayUse(p, f) && !chain.includes(f)) chain.push(f);
  }
  return chain;
}

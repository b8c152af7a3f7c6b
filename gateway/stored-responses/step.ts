// The stored-Responses step of one POST /v1/responses call, around the pipeline (pipeline/call-spec.ts `around`):
// once the account is known and before the hold, a previous_response_id chain is read and the whole input rebuilt
// (so the hold and the bill are on what goes upstream), and a store: true call is refused when its account is full;
// the answer is stamped with the gateway's id; after the client has it, the record is written.
import { GatewayError } from '../errors/catalog.ts';
import type { CallAround } from '../pipeline/call-spec.ts';
import { nonTextTokens, toolsTokens } from '../pipeline/non-text.ts';
import type { Json } from '../translate/json-read.ts';
import { responsesTranslation } from '../translate/select.ts';
import { StoredAnswerSink } from './answer-sink.ts';
import { chainItems, mintId, normalizeInput, rebuiltInput, resolveReferences } from './items.ts';
import { tooLarge, type StoredResponses } from './service.ts';

function refersToItems(body: Json): boolean {
  return Array.isArray(body.input) && body.input.some((x) => typeof x === 'object' && x !== null && (x as Json).type === 'item_reference');
}

/** Does this call need the step: it stores, continues a conversation, or refers to stored items. */
export function needsStep(body: Json): boolean {
  return body.store !== false || (typeof body.previous_response_id === 'string' && body.previous_response_id !== '') || refersToItems(body);
}

export function storedStep(stored: StoredResponses, body: Json, now: () => number): CallAround {
  const store = body.store !== false;
  const previousId = typeof body.previous_response_id === 'string' && body.previous_response_id !== '' ? body.previous_response_id : null;
  const id = store ? mintId('resp') : null;
  let account = '';
  let input: Json[] = [];
  let saved: Promise<void> | null = null;
  return {
    async begin(acct) {
      account = acct;
      const t = now();
      const chain = previousId === null ? [] : await stored.chain(acct, previousId, t);
      if (store) {
        input = normalizeInput(resolveReferences(body.input, chainItems(chain)));
        await refuseWhenFull(stored, acct, Buffer.byteLength(JSON.stringify(input)), t);
      }
      // A call that only stores is sent as it came; one that continues or refers gets the rebuilt input.
      if (previousId === null && !refersToItems(body)) return {};
      const upstreamBody: Json = { ...body, input: rebuiltInput(chain, body.input) };
      delete upstreamBody.previous_response_id;
      const bytes = Buffer.byteLength(JSON.stringify(upstreamBody));
      if (bytes > stored.settings.accountBytes) throw tooLarge(stored.settings.accountBytes);
      return {
        translationFor: responsesTranslation(upstreamBody),
        guardBody: upstreamBody,
        inputBytes: bytes,
        extraInputTokens: nonTextTokens(upstreamBody.input) + toolsTokens(body.tools),
      };
    },
    sink: (inner) =>
      new StoredAnswerSink(inner, { id, store, previousId }, (response) => {
        if (id === null) return;
        const t = now();
        saved = stored.save({ id, account, previousId, createdAt: t, expiresAt: t + stored.settings.retentionMs, input, response }, t);
      }),
    end: async () => {
      if (saved) await saved;
    },
  };
}

/** 400 before anything is spent when this call's input would take the account's stored responses over its bound. */
async function refuseWhenFull(stored: StoredResponses, account: string, inputBytes: number, now: number): Promise<void> {
  const bound = stored.settings.accountBytes;
  const used = await stored.usedBytes(account, now);
  if (used + inputBytes <= bound) return;
  throw new GatewayError(
    'stored_responses_full',
    `This account's stored responses hold ${used} bytes of ${bound} (SVC_RESPONSES_ACCOUNT_MAX_BYTES): delete some (DELETE /v1/responses/{id}), wait for them to expire, or send store: false.`,
    { param: 'store' },
  );
}

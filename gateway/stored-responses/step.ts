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

/** Does this call need the step: it stores, continues a conversation, or refers to stored items. */
export function needsStep(body: Json): boolean {
  const refers = Array.isArray(body.input) && body.input.some((x) => typeof x === 'object' && x !== null && (x as Json).type === 'item_reference');
  return body.store !== false || (typeof body.previous_response_id === 'string' && body.previous_response_id !== '') || refers;
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
      const rebuilt = rebuiltInput(chain, body.input);
      const upstreamBody: Json = { ...body, input: rebuilt };
      delete upstreamBody.previous_response_id;
      const bytes = Buffer.byteLength(JSON.stringify(upstreamBody));
      const bound = stored.settings.accountBytes;
      if (previousId !== null && bytes > bound) throw tooLarge(bound);
      if (store) {
        input = normalizeInput(resolveReferences(body.input, chainItems(chain)));
        const used = await stored.usedBytes(acct, t);
        if (used + Buffer.byteLength(JSON.stringify(input)) > bound) {
          throw new GatewayError(
            'stored_responses_full',
            `This account's stored responses hold ${used} bytes of ${bound} (SVC_RESPONSES_ACCOUNT_MAX_BYTES): delete some (DELETE /v1/responses/{id}), wait for them to expire, or send store: false.`,
            { param: 'store' },
          );
        }
      }
      return {
        translationFor: responsesTranslation(upstreamBody),
        inputBytes: bytes,
        extraInputTokens: nonTextTokens(rebuilt) + toolsTokens(body.tools),
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

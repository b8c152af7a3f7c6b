// Responses client -> an upstream that speaks the Responses API itself (an openai target with responsesApi, such
// as OpenAI): the body as sent, apart from the model name and task_type (ours); the answer as the upstream wrote
// it with the model set to the one that served; usage read from the response (streamed: from response.completed,
// .incomplete or .failed). Only the lifecycle events, which carry the response object, are parsed.
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import type { SseEvent } from '../../sse/parser.ts';
import { responseFacts } from '../answer-facts.ts';
import { rawEvent } from '../anthropic/anthropic-sse.ts';
import { sendHeldBound } from '../held-bound.ts';
import { isObject, parseUpstream, type Json } from '../json-read.ts';
import { openAIErrorMessage } from '../openai/openai-usage.ts';
import { responsesStreamError } from './responses-events.ts';
import { fromResponsesUsage, type ResponsesUsage } from './responses-usage.ts';
import {
  NO_USAGE,
  safeJson,
  type AnswerFacts,
  type StreamErrorCode,
  type StreamTranslator,
  type Translation,
  type UpstreamRequest,
  type Usage,
} from '../types.ts';

export function upstreamResponsesBody(client: Json, upstreamModel: string): Json {
  const out: Json = { ...client, model: upstreamModel };
  if (isObject(client.metadata)) {
    const { task_type: _t, ...rest } = client.metadata;
    if (Object.keys(rest).length > 0) out.metadata = rest;
    else delete out.metadata;
  }
  return out;
}

const LIFECYCLE = new Set(['response.created', 'response.in_progress', 'response.completed', 'response.incomplete', 'response.failed', 'response.queued']);
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

class ResponsesPassThroughStream implements StreamTranslator {
  complete = false;
  failed = false;
  private seen: Usage = NO_USAGE;
  private noted: AnswerFacts = { id: null, finishReasons: [] };
  private readonly model: string;
  private at = { id: 'resp_', createdAt: 0, seq: 0 };

  constructor(model: string) {
    this.model = model;
  }

  event(ev: SseEvent): string {
    const head = ev.event ?? /"type":"([^"]+)"/.exec(ev.data.slice(0, 80))?.[1] ?? '';
    const seq = /"sequence_number":(\d+)/.exec(ev.data)?.[1];
    if (seq !== undefined) this.at.seq = Number(seq) + 1;
    if (head === 'error') {
      this.complete = true;
      this.failed = true;
      return rawEvent(ev);
    }
    if (!LIFECYCLE.has(head)) return rawEvent(ev);
    const data = safeJson(ev.data);
    if (!isObject(data) || !isObject(data.response)) return rawEvent(ev);
    const response = data.response;
    if (typeof response.id === 'string') this.at.id = response.id;
    if (typeof response.created_at === 'number') this.at.createdAt = response.created_at;
    if (TERMINAL.has(head)) {
      this.complete = true;
      this.failed = head === 'response.failed';
      if (isObject(response.usage)) this.seen = fromResponsesUsage(response.usage as ResponsesUsage);
      this.noted = responseFacts(response);
    }
    return rawEvent({ event: ev.event, data: JSON.stringify({ ...data, response: { ...response, model: this.model } }) });
  }

  finish(): string {
    return '';
  }

  usage(): Usage {
    return this.seen;
  }

  facts(): AnswerFacts {
    return this.noted.id === null && this.at.id !== 'resp_' ? { ...this.noted, id: this.at.id } : this.noted;
  }

  error(message: string, code?: StreamErrorCode): string {
    return responsesStreamError({ ...this.at, model: this.model }, message, code);
  }
}

export function responsesPassThrough(client: Json): Translation {
  return {
    dialect: 'openai',
    protocol: 'openai',
    request(target: CompiledTarget, model: CompiledModel): UpstreamRequest {
      const body = upstreamResponsesBody(client, target.upstreamModel);
      // The output cap the hold assumed goes upstream (estimate.ts), in every bound field the client sent too.
      const held = typeof client.max_output_tokens === 'number' ? client.max_output_tokens : model.maxOutputTokens;
      sendHeldBound(body, held);
      body.max_output_tokens = held;
      return { operation: 'responses', body: JSON.stringify(body), stream: client.stream === true, headers: {} };
    },
    response(upstreamBody: string, servedModel: string) {
      const body = parseUpstream(upstreamBody);
      return {
        body: JSON.stringify({ ...body, model: servedModel }),
        usage: fromResponsesUsage(body.usage as ResponsesUsage | undefined),
        facts: responseFacts(body),
      };
    },
    stream: (servedModel: string) => new ResponsesPassThroughStream(servedModel),
    errorMessage: openAIErrorMessage,
  };
}

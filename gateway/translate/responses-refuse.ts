// What no upstream gets from /v1/responses, whichever protocol serves the model: the gateway stores no responses
// (stateless, as Codex uses the API: store false, the whole input every turn), so nothing may refer to a stored
// one, and it runs no background jobs. Checked by the route before admission, so such a call costs nothing.
import { GatewayError } from '../errors/catalog.ts';
import { isObject, type Json } from './json-read.ts';

const STATELESS = 'this gateway stores no responses: send the whole conversation in `input` every turn (as with store: false)';

function refuse(param: string, message: string): GatewayError {
  return new GatewayError('unsupported_content', `${param}: ${message}`, { param });
}

export function refuseStateful(client: Json): void {
  if (client.previous_response_id !== undefined && client.previous_response_id !== null) throw refuse('previous_response_id', STATELESS);
  if (client.conversation !== undefined && client.conversation !== null) throw refuse('conversation', STATELESS);
  if (client.background === true) throw refuse('background', 'background responses are not supported: stream the response instead');
  if (Array.isArray(client.input)) {
    client.input.forEach((item, i) => {
      if (isObject(item) && item.type === 'item_reference') throw refuse(`input[${i}]`, `an item_reference refers to a stored item; ${STATELESS}`);
    });
  }
}

// What no upstream gets from /v1/responses, whichever protocol serves the model: `conversation` (the gateway keeps
// no Conversations objects; previous_response_id chains responses instead) and background runs. Without stored
// responses (a gateway built with none), what refers to a stored one too. Checked by the route before admission,
// so such a call costs nothing.
import { GatewayError } from '../../errors/catalog.ts';
import { isObject, type Json } from '../json-read.ts';

const STATELESS = 'this gateway stores no responses: send the whole conversation in `input` every turn (as with store: false)';

function refuse(param: string, message: string): GatewayError {
  return new GatewayError('unsupported_content', `${param}: ${message}`, { param });
}

export function refuseStateful(client: Json, storing: boolean): void {
  if (client.conversation !== undefined && client.conversation !== null) {
    throw refuse('conversation', 'this gateway keeps no conversation objects: chain responses with previous_response_id instead');
  }
  if (client.background === true) throw refuse('background', 'background responses are not supported: stream the response instead');
  if (storing) return;
  if (client.previous_response_id !== undefined && client.previous_response_id !== null) throw refuse('previous_response_id', STATELESS);
  if (Array.isArray(client.input)) {
    client.input.forEach((item, i) => {
      if (isObject(item) && item.type === 'item_reference') throw refuse(`input[${i}]`, `an item_reference refers to a stored item; ${STATELESS}`);
    });
  }
}

// `npm run guardrails:corpus`: the precision and recall of each built-in guardrail detector on the labelled corpus.
import { corpus } from './corpus.ts';
import { evaluate, table } from './evaluate.ts';

const samples = corpus();
console.log(table(evaluate(samples), samples.length));

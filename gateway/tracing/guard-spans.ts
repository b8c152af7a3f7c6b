// A guardrail check of a call as an OpenTelemetry span: an INTERNAL child of the call's span per check and stage,
// named "guardrail {guardrail}/{check}", with what the check is (guardrail, check, detector), where it ran (stage),
// what it does on a match (action), how many matches it found and whether it blocked the call. Its duration is the
// time the check's detector ran (summed over a streamed answer's pieces), from the stage's first scan. Never the
// matched text: the check knows only counts (gateway/guardrails/check-times.ts).
import { ROOT_CONTEXT, SpanKind, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { CheckSpan } from '../guardrails/check-times.ts';

export function guardSpan(tracer: Tracer, parent: Span, s: CheckSpan): void {
  const span = tracer.startSpan(
    `guardrail ${s.guardrail}/${s.check}`,
    {
      kind: SpanKind.INTERNAL,
      startTime: s.startedAt,
      attributes: {
        'svc.guardrail.name': s.guardrail,
        'svc.guardrail.check': s.check,
        'svc.guardrail.detector': s.detector,
        'svc.guardrail.stage': s.stage,
        'svc.guardrail.action': s.action,
        'svc.guardrail.matches': s.matches,
        'svc.guardrail.blocked': s.blocked,
      },
    },
    trace.setSpan(ROOT_CONTEXT, parent),
  );
  span.end(s.startedAt + s.durationMs);
}

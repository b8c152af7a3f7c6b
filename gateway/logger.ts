// The process's logger, made before the server so start-up (Redis, config, the console) logs the way requests do:
// JSON lines, the same redaction of credentials everywhere.
import { pino, type Logger } from 'pino';

export const REDACT = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.apiKey',
  '*.credential',
  '*.pepper',
];

export function gatewayLogger(level: string): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' } });
}

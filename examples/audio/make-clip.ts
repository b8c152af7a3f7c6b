// Writes examples/audio/clip.wav, the demo's bundled clip: one second of a 440 Hz tone, 8 kHz, 8-bit mono (8 kB).
// Run: node examples/audio/make-clip.ts
import { writeFileSync } from 'node:fs';
import { toneWav8 } from '../../gateway/providers/mock/audio-bytes.ts';

writeFileSync(new URL('./clip.wav', import.meta.url), toneWav8(1));

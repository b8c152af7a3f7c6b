// Small facts about this machine that several test harnesses need: a free loopback port, an executable file.
import { accessSync, constants } from 'node:fs';
import { createServer } from 'node:net';

/** A loopback port that was free a moment ago, for servers that must be told their port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no free port'))));
    });
  });
}

export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

// The cluster console as a real process (node console/main.ts, as npm run console runs it).
import { spawn, type ChildProcess } from 'node:child_process';
import { ROOT } from '../helpers/process.ts';

export interface ConsoleProcess {
  url: string;
  child: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

export async function startConsoleProcess(env: Record<string, string>): Promise<ConsoleProcess> {
  const child = spawn(process.execPath, ['console/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    // Generous: on a loaded shared machine importing the console alone can take over 20 s.
    const timer = setTimeout(() => reject(new Error(`console did not start:\n${out}`)), 90_000);
    const check = (): void => {
      const m = /svc-console listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout?.on('data', check);
    child.on('exit', (code) => reject(new Error(`console exited with ${code}:\n${out}`)));
  });
  return {
    url,
    child,
    output: () => out,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

// A memory cgroup for one process of a bench, as a pod's memory limit puts a container in one: the kernel kills the
// process when it goes over, and Node sizes its heap from the limit (V8's heap limit follows the constrained memory).
// cgroup v2 (a unified hierarchy with the memory controller) or v1 (/sys/fs/cgroup/memory); needs root.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface MemoryCgroup {
  /** Write a pid here to put that process in the cgroup (a child started after inherits it). */
  procsFile: string;
  limitBytes: number;
  /** The most memory the cgroup used at once. */
  peakBytes(): number;
  /** How many times the kernel killed a process in it for memory. */
  oomKills(): number;
  remove(): void;
}

/** "512Mi", "1Gi", "300M" or bytes. */
export function parseBytes(s: string): number {
  const m = /^(\d+)(Ki|Mi|Gi|K|M|G)?$/.exec(s.trim());
  if (!m) throw new Error(`not a size: ${s} (say 512Mi, 1Gi or a number of bytes)`);
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, K: 1e3, M: 1e6, G: 1e9 }[m[2] ?? ''] ?? 1;
  return Number(m[1]) * unit;
}

const read = (file: string): string => readFileSync(file, 'utf8').trim();
const field = (text: string, name: string): number => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);

export function memoryCgroup(name: string, limitBytes: number): MemoryCgroup {
  const v2 = existsSync('/sys/fs/cgroup/cgroup.controllers') && read('/sys/fs/cgroup/cgroup.controllers').split(/\s+/).includes('memory');
  const root = v2 ? '/sys/fs/cgroup' : '/sys/fs/cgroup/memory';
  if (!existsSync(root)) throw new Error(`no memory cgroup controller at ${root}: run the bench as root on Linux with cgroups mounted`);
  const dir = join(root, name);
  try {
    mkdirSync(dir, { recursive: true });
    if (v2) writeFileSync(join(dir, 'memory.max'), String(limitBytes));
    // The process joins before it allocates anything (a shell that then execs node): no charges to move.
    else writeFileSync(join(dir, 'memory.limit_in_bytes'), String(limitBytes));
  } catch (err) {
    throw new Error(`cannot make memory cgroup ${dir} (${err instanceof Error ? err.message : String(err)}): it needs root and a writable cgroup hierarchy`, {
      cause: err,
    });
  }
  return {
    procsFile: join(dir, 'cgroup.procs'),
    limitBytes,
    peakBytes: () => Number(read(join(dir, v2 ? 'memory.peak' : 'memory.max_usage_in_bytes'))),
    oomKills: () => field(read(join(dir, v2 ? 'memory.events' : 'memory.oom_control')), 'oom_kill'),
    remove: () => {
      try {
        rmdirSync(dir);
      } catch {
        // A process is still in it (the kernel refuses to remove it then): it stays behind, empty once that process ends.
      }
    },
  };
}

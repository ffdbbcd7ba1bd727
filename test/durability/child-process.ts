/** Running the durability children: the TypeScript sources through tsx, as separate Node processes. */
import { spawn } from 'node:child_process';

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run `script` (a .ts file) with `args`; resolves when it exits, however it exits. */
export function runChild(script: URL, args: string[], env: NodeJS.ProcessEnv = {}): Promise<ChildExit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script.pathname, ...args], {
      env: { ...process.env, LANCEDB_LOG: 'error', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

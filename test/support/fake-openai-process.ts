/**
 * The fake OpenAI-compatible server (fake-openai-server.ts) in a child process of its own, as a model server is:
 * its timers and request handling then do not wait on the caller's thread, and the caller's CPU does not delay the
 * server's answers. For benchmarks that time memfold against a server's latency; tests use the in-process server,
 * whose behaviours they script. Run as a script, this file is the child.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startFakeOpenAI, type FakeOpenAIOptions } from './fake-openai-server.js';

export interface FakeOpenAIProcess {
  baseURL: string;
  /** Chat completion requests the server has received, and how many it answered 429. */
  stats(): Promise<{ chatRequests: number; rateLimited: number }>;
  close(): Promise<void>;
}

type ChildMessage = { baseURL: string } | { chatRequests: number; rateLimited: number };

/** Start the server in a child process (same loader flags as this one); options must be plain data. */
export async function startFakeOpenAIProcess(options: FakeOpenAIOptions): Promise<FakeOpenAIProcess> {
  const child = fork(fileURLToPath(import.meta.url), [JSON.stringify(options)], { execArgv: process.execArgv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const next = () =>
    new Promise<ChildMessage>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`fake OpenAI server process exited with ${code}`));
      child.once('exit', onExit);
      child.once('message', (message) => {
        child.off('exit', onExit);
        resolve(message as ChildMessage);
      });
    });
  const started = (await next()) as { baseURL: string };
  return {
    baseURL: started.baseURL,
    async stats() {
      const answer = next();
      child.send('stats');
      return (await answer) as { chatRequests: number; rateLimited: number };
    },
    close: () => stop(child),
  };
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill();
  });
}

async function serve(): Promise<void> {
  const server = await startFakeOpenAI(JSON.parse(process.argv[2] ?? '{}') as FakeOpenAIOptions);
  process.on('message', (message) => {
    if (message !== 'stats') return;
    const chatRequests = server.requests.filter((r) => r.path === '/v1/chat/completions').length;
    process.send!({ chatRequests, rateLimited: server.rateLimited });
  });
  process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
  process.send!({ baseURL: server.baseURL });
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.send) await serve();

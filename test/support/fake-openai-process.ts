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
  /**
   * Chat completion requests the server has received, and how many it answered 429; `chat` lists them in arrival
   * order with the model asked, the server's arrival time (Date.now() in the child) and whether it was refused.
   */
  stats(): Promise<FakeOpenAIStats>;
  close(): Promise<void>;
}

export interface FakeOpenAIStats {
  chatRequests: number;
  rateLimited: number;
  chat: Array<{ model: string; at: number; rateLimited: boolean }>;
}

type ChildMessage = { baseURL: string } | FakeOpenAIStats;

/**
 * Start the server in a child process (same loader flags as this one, with tsx's added when they lack it, as in a
 * vitest worker); options must be plain data.
 */
export async function startFakeOpenAIProcess(options: FakeOpenAIOptions): Promise<FakeOpenAIProcess> {
  const execArgv = process.execArgv.some((arg) => arg.includes('tsx')) ? process.execArgv : [...process.execArgv, '--import', 'tsx'];
  const child = fork(fileURLToPath(import.meta.url), [JSON.stringify(options)], { execArgv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
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
      return (await answer) as FakeOpenAIStats;
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
    const chat = server.requests
      .filter((r) => r.path === '/v1/chat/completions')
      .map((r) => ({ model: String(r.body?.model), at: r.at, rateLimited: r.rateLimited }));
    const stats: FakeOpenAIStats = { chatRequests: chat.length, rateLimited: server.rateLimited, chat };
    process.send!(stats);
  });
  process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
  process.send!({ baseURL: server.baseURL });
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.send) await serve();

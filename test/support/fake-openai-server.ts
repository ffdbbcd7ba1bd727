/**
 * A fake OpenAI-compatible server for tests: a real node:http server on 127.0.0.1 (port 0) serving
 * `POST /v1/chat/completions` and `POST /v1/embeddings`, so the real `openai` client is exercised end to end.
 * Behaviours are set for every call (`setBehavior`) or queued for the next calls (`enqueue`).
 * Optionally every answer takes `latencyMs`, and a `rateLimit` answers 429 with `retry-after` when exceeded.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type FakeBehavior =
  | { kind: 'ok'; text?: string; usage?: { prompt_tokens: number; completion_tokens: number } | null; finishReason?: string }
  | { kind: 'status'; code: number; headers?: Record<string, string>; body?: unknown }
  | { kind: 'delay'; ms: number; after?: FakeBehavior }
  | { kind: 'empty' }
  | { kind: 'malformed' }
  /** A chat answer whose content string is these bytes, written as they are (not re-encoded) into the JSON. */
  | { kind: 'rawContent'; bytes: Buffer };

export const behaviors = {
  ok: (text?: string): FakeBehavior => (text === undefined ? { kind: 'ok' } : { kind: 'ok', text }),
  okWithoutUsage: (text?: string): FakeBehavior => ({ kind: 'ok', usage: null, ...(text === undefined ? {} : { text }) }),
  status: (code: number, headers?: Record<string, string>): FakeBehavior => (headers ? { kind: 'status', code, headers } : { kind: 'status', code }),
  delay: (ms: number, after?: FakeBehavior): FakeBehavior => (after ? { kind: 'delay', ms, after } : { kind: 'delay', ms }),
  empty: (): FakeBehavior => ({ kind: 'empty' }),
  malformed: (): FakeBehavior => ({ kind: 'malformed' }),
  /** Cut off at the output limit: `finish_reason: 'length'`. */
  truncated: (text = 'Summary: the user asked to keep order'): FakeBehavior => ({ kind: 'ok', text, finishReason: 'length' }),
  /** Text of at most `tokens` x 4 characters, reported as `completion_tokens: tokens`. */
  overLong: (tokens: number): FakeBehavior => ({
    kind: 'ok',
    text: ('Summary:' + ' word'.repeat(tokens)).slice(0, tokens * 4),
    usage: { prompt_tokens: 111, completion_tokens: tokens },
  }),
  rawContent: (bytes: Buffer): FakeBehavior => ({ kind: 'rawContent', bytes }),
  /** 0xC3 0x28: a two-byte lead followed by "(", not UTF-8; decoders make it U+FFFD. */
  invalidUtf8: (): FakeBehavior => ({
    kind: 'rawContent',
    bytes: Buffer.concat([Buffer.from('Summary: caf'), Buffer.from([0xc3, 0x28]), Buffer.from(' order ORD-7')]),
  }),
  /** A JSON escape of a lone high surrogate: valid JSON, not valid Unicode. */
  loneSurrogate: (): FakeBehavior => ({ kind: 'rawContent', bytes: Buffer.from('Summary: order \\ud800 ORD-7') }),
};

export interface RecordedRequest {
  path: string;
  body: any;
  headers: Record<string, string>;
}

export interface FakeOpenAIOptions {
  /** Behaviour of every call not taken from the queue. Default `ok`. */
  behavior?: FakeBehavior;
  /** Vector length of embeddings. Default 8. */
  dimensions?: number;
  /** Return embeddings in reverse `index` order (clients must sort by index). Default false. */
  shuffleEmbeddings?: boolean;
  /** Added before every answer on the two routes (not before a 429). Default 0. */
  latencyMs?: number;
  /** Requests accepted per minute on the two routes; unset means no limit. */
  rateLimit?: RateLimit;
}

/**
 * A requests-per-minute limit enforced as a token bucket, the way hosted APIs quantize it: at most
 * `burst` requests at once (default one second's worth, rpm / 60, at least 1), refilled at rpm / 60 per
 * second. A request finding no token gets 429 with `retry-after-ms` and `retry-after` (whole seconds, rounded up).
 */
export interface RateLimit {
  requestsPerMinute: number;
  burst?: number;
}

export interface FakeOpenAI {
  /** Ends with `/v1`. */
  baseURL: string;
  requests: RecordedRequest[];
  /** Requests being handled right now, and the most seen at once. */
  readonly inFlight: number;
  readonly maxInFlight: number;
  setBehavior(behavior: FakeBehavior): void;
  /** Behaviours for the next calls, in order; then the default behaviour again. */
  enqueue(...next: FakeBehavior[]): void;
  setDimensions(dimensions: number): void;
  /** Latency of every later answer (see FakeOpenAIOptions.latencyMs). */
  setLatency(ms: number): void;
  /** Replace the rate limit (a full bucket), or remove it with undefined. */
  setRateLimit(limit: RateLimit | undefined): void;
  /** Requests answered 429 by the rate limit so far. */
  readonly rateLimited: number;
  close(): Promise<void>;
}

/** A deterministic vector for a text: a simple character hash spread over `dimensions`. */
export function fakeVector(text: string, dimensions: number): number[] {
  const v = new Array<number>(dimensions).fill(0);
  for (let i = 0; i < text.length; i++) v[(text.charCodeAt(i) * 31 + i) % dimensions]! += 1;
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

/** "Summary: " + the first words of the transcript (or of the last message). */
export function fakeSummary(body: any): string {
  const messages: Array<{ content?: string }> = Array.isArray(body?.messages) ? body.messages : [];
  const last = String(messages[messages.length - 1]?.content ?? '');
  const tagged = /<transcript>\n([\s\S]*?)\n<\/transcript>/.exec(last)?.[1] ?? last;
  return `Summary: ${tagged.split(/\s+/).filter(Boolean).slice(0, 12).join(' ')}`;
}

/** The bucket of a RateLimit: `take()` returns 0 when a request may go, else the ms until it may. */
function tokenBucket(limit: RateLimit, clock: () => number = Date.now): { take(): number } {
  const perMs = limit.requestsPerMinute / 60_000;
  const burst = limit.burst ?? Math.max(1, limit.requestsPerMinute / 60);
  let tokens = burst;
  let last = clock();
  return {
    take() {
      const t = clock();
      tokens = Math.min(burst, tokens + (t - last) * perMs);
      last = t;
      if (tokens >= 1) {
        tokens -= 1;
        return 0;
      }
      return Math.ceil((1 - tokens) / perMs);
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  let behavior: FakeBehavior = options.behavior ?? { kind: 'ok' };
  let dimensions = options.dimensions ?? 8;
  const queue: FakeBehavior[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let inFlight = 0;
  let maxInFlight = 0;
  let counter = 0;
  let latencyMs = options.latencyMs ?? 0;
  let bucket = options.rateLimit ? tokenBucket(options.rateLimit) : undefined;
  let rateLimited = 0;

  const send = (res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void => {
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(code, { 'content-type': 'application/json', ...headers });
    res.end(typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body));
  };

  const chatCompletion = (body: any, text: string, finishReason: string, usage?: { prompt_tokens: number; completion_tokens: number }) => ({
    id: `chatcmpl-fake-${++counter}`,
    object: 'chat.completion',
    created: 0,
    model: body?.model ?? 'fake',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: finishReason }],
    ...(usage ? { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } } : {}),
  });

  const respond = async (res: ServerResponse, path: string, body: any, b: FakeBehavior): Promise<void> => {
    switch (b.kind) {
      case 'delay':
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            timers.delete(timer);
            resolve();
          }, b.ms);
          timers.add(timer);
          res.on('close', () => {
            clearTimeout(timer);
            timers.delete(timer);
            resolve();
          });
        });
        return respond(res, path, body, b.after ?? { kind: 'ok' });
      case 'status':
        return send(res, b.code, b.body ?? { error: { message: `fake status ${b.code}`, type: 'fake_error', code: null } }, b.headers);
      case 'malformed':
        return send(res, 200, '{"choices": [ this is not json');
      case 'rawContent': {
        const marker = 'RAW-CONTENT-MARKER';
        const [before, after] = JSON.stringify(chatCompletion(body, marker, 'stop', { prompt_tokens: 111, completion_tokens: 22 })).split(marker);
        return send(res, 200, Buffer.concat([Buffer.from(before!), b.bytes, Buffer.from(after!)]));
      }
      case 'empty':
      case 'ok': {
        if (path === '/v1/embeddings') {
          const input: string[] = Array.isArray(body?.input) ? body.input : [String(body?.input ?? '')];
          let data = input.map((text, index) => ({ object: 'embedding', index, embedding: fakeVector(text, dimensions) }));
          if (options.shuffleEmbeddings) data = data.reverse();
          return send(res, 200, {
            object: 'list',
            data,
            model: body?.model,
            usage: { prompt_tokens: input.join(' ').length, total_tokens: input.join(' ').length },
          });
        }
        const text = b.kind === 'empty' ? '' : (b.text ?? fakeSummary(body));
        const usage = b.kind === 'ok' && b.usage === null ? undefined : (b.kind === 'ok' && b.usage) || { prompt_tokens: 111, completion_tokens: 22 };
        return send(res, 200, chatCompletion(body, text, (b.kind === 'ok' && b.finishReason) || 'stop', usage));
      }
    }
  };

  const server = createServer(async (req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      const raw = await readBody(req);
      let body: any;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = raw;
      }
      const path = (req.url ?? '').split('?')[0]!;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
      requests.push({ path, body, headers });
      if (req.method !== 'POST' || (path !== '/v1/chat/completions' && path !== '/v1/embeddings')) {
        return send(res, 404, { error: { message: `no route ${req.method} ${path}` } });
      }
      const waitMs = bucket?.take() ?? 0;
      if (waitMs > 0) {
        rateLimited++;
        const message = `fake rate limit: retry in ${waitMs} ms`;
        return send(
          res,
          429,
          { error: { message, type: 'requests', code: 'rate_limit_exceeded' } },
          {
            'retry-after-ms': String(waitMs),
            'retry-after': String(Math.ceil(waitMs / 1000)),
          },
        );
      }
      const next = queue.shift() ?? behavior;
      await respond(res, path, body, latencyMs > 0 ? { kind: 'delay', ms: latencyMs, after: next } : next);
    } finally {
      inFlight--;
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    setBehavior(next) {
      behavior = next;
    },
    enqueue(...next) {
      queue.push(...next);
    },
    setDimensions(next) {
      dimensions = next;
    },
    setLatency(ms) {
      latencyMs = ms;
    },
    setRateLimit(limit) {
      bucket = limit ? tokenBucket(limit) : undefined;
    },
    get rateLimited() {
      return rateLimited;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A fake OpenAI-compatible server for tests: a real node:http server on 127.0.0.1 (port 0) serving
 * `POST /v1/chat/completions` and `POST /v1/embeddings`, so the real `openai` client is exercised end to end.
 * Behaviours are set for every call (`setBehavior`) or queued for the next calls (`enqueue`).
 * Optionally every answer takes `latencyMs`, and a `rateLimit` answers 429 with `retry-after` when exceeded.
 * The `structured` behaviour answers like a model that follows a sectioned summary prompt (`structuredSummary`);
 * `script` picks each answer from the request itself (a model per name, a tool call or an answer by what was sent).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A chat answer's usage; `prompt_tokens_details.cached_tokens` as OpenAI reports prompt-cache hits. */
export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
}

export type FakeBehavior =
  | { kind: 'ok'; text?: string; usage?: FakeUsage | null; finishReason?: string }
  | { kind: 'status'; code: number; headers?: Record<string, string>; body?: unknown }
  | { kind: 'delay'; ms: number; after?: FakeBehavior }
  /** Answer (as `after`) only once `until` resolves: the test decides when, not a clock. */
  | { kind: 'hold'; until: Promise<void>; after?: FakeBehavior }
  | { kind: 'empty' }
  | { kind: 'malformed' }
  /** A chat answer whose content string is these bytes, written as they are (not re-encoded) into the JSON. */
  | { kind: 'rawContent'; bytes: Buffer }
  /** A sectioned summary made from the request itself (`structuredSummary`), usage counted as chars / 4. */
  | { kind: 'structured'; itemChars?: number }
  /** A chat answer that calls one function: what an assistant sends when it wants memory_read. */
  | { kind: 'toolCall'; name: string; arguments: string; usage?: FakeUsage }
  /** The behaviour `pick` chooses from the request body: a model scripted per request (by its model name, messages, tools). */
  | { kind: 'script'; pick: (body: any) => FakeBehavior };

export const behaviors = {
  ok: (text?: string): FakeBehavior => (text === undefined ? { kind: 'ok' } : { kind: 'ok', text }),
  okWithoutUsage: (text?: string): FakeBehavior => ({ kind: 'ok', usage: null, ...(text === undefined ? {} : { text }) }),
  status: (code: number, headers?: Record<string, string>): FakeBehavior => (headers ? { kind: 'status', code, headers } : { kind: 'status', code }),
  delay: (ms: number, after?: FakeBehavior): FakeBehavior => (after ? { kind: 'delay', ms, after } : { kind: 'delay', ms }),
  hold: (until: Promise<void>, after?: FakeBehavior): FakeBehavior => (after ? { kind: 'hold', until, after } : { kind: 'hold', until }),
  empty: (): FakeBehavior => ({ kind: 'empty' }),
  toolCall: (name: string, args: Record<string, unknown>, usage?: FakeUsage): FakeBehavior => ({
    kind: 'toolCall',
    name,
    arguments: JSON.stringify(args),
    ...(usage ? { usage } : {}),
  }),
  script: (pick: (body: any) => FakeBehavior): FakeBehavior => ({ kind: 'script', pick }),
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
  /** Seven sections filled from the transcript; merged into the previous summary when the system prompt asks for an updated one. */
  structured: (itemChars?: number): FakeBehavior => (itemChars === undefined ? { kind: 'structured' } : { kind: 'structured', itemChars }),
};

export interface RecordedRequest {
  path: string;
  body: any;
  headers: Record<string, string>;
  /** When the server took it (Date.now(), after its body arrived): the time the rate limit judged it by. */
  at: number;
  /** Whether the rate limit answered it 429. */
  rateLimited: boolean;
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

/** The sections `structuredSummary` writes, in order (the headings of memfold's built-in prompts). */
export const FAKE_SECTIONS = ['Goal', 'User requests and constraints', 'Facts', 'Files and tools', 'Errors and fixes', 'Decisions', 'Next steps'] as const;
type FakeSection = (typeof FAKE_SECTIONS)[number];

/** Headings other summarizers write (the extractive one's), read as the nearest section. */
const SECTION_ALIASES: Record<string, FakeSection> = { 'User asked': 'User requests and constraints', Errors: 'Errors and fixes', 'Open items': 'Next steps' };

/** The section a transcript message goes to, by a few cue words; undefined: filler, left out. */
function sectionOf(role: string, text: string): FakeSection | undefined {
  if (role === 'tool') return 'Files and tools';
  if (/\b(error|errors|failed|fails|failure|exception|crash|bug|broken|broke|fixed|fix)\b/i.test(text)) return 'Errors and fixes';
  if (/\b(decided|decide|agreed|agree|chose|choose|settled|going with)\b/i.test(text)) return 'Decisions';
  if (/\b(next|todo|pending|tomorrow|later|soon|plan|planning|will)\b/i.test(text)) return 'Next steps';
  if (role === 'user' && /\?|\b(please|can you|could you|want|need|must|should)\b/i.test(text)) return 'User requests and constraints';
  if (/\d|\s[A-Z][a-z]/.test(text)) return 'Facts';
  return undefined;
}

/** `<tag>` .. `</tag>` of a request's user message, or undefined. */
function taggedPart(text: string, tag: string): string | undefined {
  return new RegExp(`<${tag}>\\n([\\s\\S]*?)\\n</${tag}>`).exec(text)?.[1];
}

interface FakeItem {
  section: FakeSection;
  text: string;
}

/**
 * The items of a request's material, oldest first: `- ` items under a known heading (summaries: the previous one,
 * or those re-summarization merges, whose `[depth:...]` headers are skipped), and one item per transcript message,
 * `[date] speaker: text` cut to `itemChars`, in the section its cue words pick (tool calls go to Files and tools).
 */
function itemsOf(material: string, itemChars: number): FakeItem[] {
  const items: FakeItem[] = [];
  let section: FakeSection | undefined;
  let date = '';
  let speaker = '';
  const clip = (text: string) => (text.length > itemChars ? `${text.slice(0, itemChars)}…` : text);
  for (const line of material.split('\n')) {
    const heading = /^([A-Z][A-Za-z ,/]{1,40}):$/.exec(line.trim())?.[1];
    if (heading !== undefined) {
      section = (FAKE_SECTIONS as readonly string[]).includes(heading) ? (heading as FakeSection) : SECTION_ALIASES[heading];
      continue;
    }
    if (/^\[depth:\d+\|/.test(line)) {
      section = undefined;
      continue;
    }
    if (line.startsWith('- ') && section) {
      items.push({ section, text: line.slice(2) });
      continue;
    }
    if (line.startsWith('-> call ')) {
      items.push({ section: 'Files and tools', text: clip(`[${date}] ${speaker} called ${line.slice(8)}`) });
      continue;
    }
    const message = /^(?:\[([^\]]*)\] )?(user|assistant|tool|system)(?:\(([^)]*)\))?(?:#\S+)?: (.*)$/.exec(line);
    if (!message) continue; // continuation lines, blank lines, notes
    if (message[1]) date = message[1].slice(0, 10);
    speaker = message[3] ?? message[2]!;
    const target = sectionOf(message[2]!, message[4]!);
    if (target) items.push({ section: target, text: clip(`[${date}] ${speaker}: ${message[4]!}`) });
  }
  return items;
}

function renderSections(items: readonly FakeItem[]): string {
  return FAKE_SECTIONS.flatMap((section) => {
    const mine = items.filter((item) => item.section === section);
    return mine.length === 0 ? [] : [`${section}:\n${mine.map((item) => `- ${item.text}`).join('\n')}`];
  }).join('\n');
}

/**
 * What a model that follows a sectioned summary prompt might answer, made only from the request body, deterministic.
 * Items come from the transcript (`itemsOf`); the goal is the previous summary's (when merging) or the first user
 * message. When the system prompt asks for an "updated summary" and a `<previous_summary>` is given, the previous
 * summary's items come first and the new ones are added (a merge); otherwise the previous summary is left out (a
 * delta). Within max_tokens x 4 characters: while too long, the oldest item of the fullest section goes (never the goal).
 */
export function structuredSummary(body: any, itemChars = 160): string {
  const messages: Array<{ role?: string; content?: string }> = Array.isArray(body?.messages) ? body.messages : [];
  const system = String(messages.find((m) => m.role === 'system')?.content ?? '');
  const user = String(messages[messages.length - 1]?.content ?? '');
  const budget = 4 * Number(body?.max_tokens ?? body?.max_completion_tokens ?? 256);
  const previous = taggedPart(user, 'previous_summary');
  const transcript = taggedPart(user, 'transcript') ?? user;
  const merging = previous !== undefined && /\bupdated summary\b/i.test(system);
  const fresh = itemsOf(transcript, itemChars);
  let items = [...(merging ? itemsOf(previous, itemChars) : []), ...fresh];
  const goals = items.filter((item) => item.section === 'Goal');
  const firstAsk = /^(?:\[[^\]]*\] )?user(?:\([^)]*\))?: (.*)$/m.exec(transcript)?.[1];
  const goal: FakeItem | undefined = goals[0] ?? (firstAsk ? { section: 'Goal', text: firstAsk.slice(0, itemChars) } : undefined);
  const seen = new Set<string>();
  items = [...(goal ? [goal] : []), ...items.filter((item) => item.section !== 'Goal')].filter((item) => {
    const key = `${item.section}\n${item.text}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  while (items.length > 1 && renderSections(items).length > budget) {
    const counts = new Map<FakeSection, number>();
    for (const item of items) if (item.section !== 'Goal') counts.set(item.section, (counts.get(item.section) ?? 0) + 1);
    const fullest = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
    if (!fullest) break;
    items.splice(
      items.findIndex((item) => item.section === fullest),
      1,
    );
  }
  const text = renderSections(items);
  if (text !== '' && text.length <= budget) return text;
  return `Facts:\n- ${transcript.slice(0, Math.max(1, budget - 12)).trim() || 'nothing to note'}`.slice(0, budget);
}

/** The bucket of a RateLimit: `take(now)` returns 0 when a request arriving at `now` (Date.now()) may go, else the ms until it may. */
function tokenBucket(limit: RateLimit): { take(t: number): number } {
  const perMs = limit.requestsPerMinute / 60_000;
  const burst = limit.burst ?? Math.max(1, limit.requestsPerMinute / 60);
  let tokens = burst;
  let last = Date.now();
  return {
    take(t) {
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

  const chatCompletion = (body: any, text: string, finishReason: string, usage?: FakeUsage) => ({
    id: `chatcmpl-fake-${++counter}`,
    object: 'chat.completion',
    created: 0,
    model: body?.model ?? 'fake',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: finishReason }],
    ...(usage ? { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } } : {}),
  });

  const respond = async (res: ServerResponse, path: string, body: any, b: FakeBehavior): Promise<void> => {
    switch (b.kind) {
      case 'toolCall': {
        const call = { id: `call_fake_${++counter}`, type: 'function', function: { name: b.name, arguments: b.arguments } };
        const answer = chatCompletion(body, '', 'tool_calls', b.usage ?? { prompt_tokens: 10, completion_tokens: 10 });
        answer.choices[0]!.message = { role: 'assistant', content: null, tool_calls: [call] } as never;
        return send(res, 200, answer);
      }
      case 'script':
        return respond(res, path, body, b.pick(body));
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
      case 'hold':
        await Promise.race([b.until, new Promise<void>((resolve) => res.on('close', () => resolve()))]);
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
      case 'structured': {
        if (path === '/v1/embeddings') return respond(res, path, body, { kind: 'ok' });
        const text = structuredSummary(body, b.itemChars);
        const sent: Array<{ content?: unknown }> = Array.isArray(body?.messages) ? body.messages : [];
        const promptChars = sent.reduce((sum, m) => sum + String(m.content ?? '').length, 0);
        return send(res, 200, chatCompletion(body, text, 'stop', { prompt_tokens: Math.ceil(promptChars / 4), completion_tokens: Math.ceil(text.length / 4) }));
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
      const recorded: RecordedRequest = { path, body, headers, at: Date.now(), rateLimited: false };
      requests.push(recorded);
      if (req.method !== 'POST' || (path !== '/v1/chat/completions' && path !== '/v1/embeddings')) {
        return send(res, 404, { error: { message: `no route ${req.method} ${path}` } });
      }
      const waitMs = bucket?.take(recorded.at) ?? 0;
      if (waitMs > 0) {
        rateLimited++;
        recorded.rateLimited = true;
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

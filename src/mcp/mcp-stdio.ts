/**
 * MCP over stdio: one JSON-RPC message per line, in place of the SDK's `StdioServerTransport`. That transport
 * closes itself, silently, when a line passes its 10 MiB buffer (the server then exits 0 and answers nothing more),
 * and a line it cannot parse gets no answer. Here a line over `maxLineBytes` is answered with an error and skipped
 * up to its newline, a line that is not JSON or not a JSON-RPC message is answered too, and the requests read are
 * counted until answered, so the server can finish them when stdin ends (`drain`).
 */
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { InvalidArgumentError } from '../errors.js';
import { checkDurationMs } from '../duration-ms.js';
import { createLineSplitter } from './line-splitter.js';

/** The SDK's own read limit: a request is a tool call's few arguments, far below it. */
export const DEFAULT_MAX_LINE_BYTES = 10 * 1024 * 1024;
/** How long `drain` waits for the requests in flight by default: a tool call that opens the stores fits in it. */
export const DEFAULT_DRAIN_MS = 30_000;

/** JSON-RPC 2.0 error codes. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

export interface StdioTransportOptions {
  /** Default `process.stdin`. */
  input?: Readable;
  /** Default `process.stdout`: the protocol channel, nothing else may be written there. */
  output?: Writable;
  /** Bytes one line (one message) may take; a longer one is answered with an error and skipped. Default 10 MiB. */
  maxLineBytes?: number;
}

export interface StdioTransport extends Transport {
  /** Resolves when the input has ended (or failed): no request will come after it. */
  readonly ended: Promise<void>;
  /**
   * Resolves once every request read so far has been answered, or after `timeoutMs` (default 30,000) or on `signal`,
   * to the number still unanswered.
   */
  drain(options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<number>;
}

/** A key per request id: `1` and `"1"` are different ids. */
const idKey = (id: string | number): string => `${typeof id}:${String(id)}`;

function errorReply(code: number, message: string, id: string | number | null = null): string {
  return `${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n`;
}

/** The id of a parsed line that is not a valid message, when it has a usable one. */
function idOf(value: unknown): string | number | null {
  if (typeof value !== 'object' || value === null) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

/** A line as a message, or the error reply it gets; undefined for a blank line. */
function parseLine(bytes: Buffer): { message: JSONRPCMessage } | { reply: string } | undefined {
  const line = bytes.toString('utf8').replace(/\r$/, '');
  if (line.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { reply: errorReply(PARSE_ERROR, 'Parse error: the line is not JSON (one JSON-RPC message per line)') };
  }
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (!parsed.success) return { reply: errorReply(INVALID_REQUEST, 'Invalid Request: not a JSON-RPC 2.0 message', idOf(value)) };
  return { message: parsed.data as JSONRPCMessage };
}

export function createStdioTransport(options: StdioTransportOptions = {}): StdioTransport {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  if (!Number.isSafeInteger(maxLineBytes) || maxLineBytes < 1) {
    throw new InvalidArgumentError('maxLineBytes', `must be an integer >= 1 (got ${String(maxLineBytes)})`);
  }
  const inFlight = new Set<string>();
  const settledWaiters = new Set<() => void>();
  let endInput!: () => void;
  const ended = new Promise<void>((resolve) => (endInput = resolve));

  /** Request `id` needs no answer any more. */
  function settle(id: unknown): void {
    if (typeof id !== 'string' && typeof id !== 'number') return;
    inFlight.delete(idKey(id));
    if (inFlight.size === 0) for (const wake of settledWaiters) wake();
  }

  const write = (text: string): Promise<void> =>
    new Promise((resolve) => {
      if (output.destroyed || !output.writable) return resolve();
      if (output.write(text)) resolve();
      else output.once('drain', resolve);
    });

  function handleLine(bytes: Buffer): void {
    const parsed = parseLine(bytes);
    if (parsed === undefined) return;
    if ('reply' in parsed) {
      void write(parsed.reply);
      return;
    }
    const { message } = parsed;
    if ('method' in message && 'id' in message) inFlight.add(idKey(message.id));
    // A cancelled request gets no answer (MCP): it is no longer waited for.
    else if ('method' in message && message.method === 'notifications/cancelled') settle(message.params?.requestId);
    transport.onmessage?.(message);
  }

  const lines = createLineSplitter({
    maxLineBytes,
    onLine: handleLine,
    onTooLong: () =>
      void write(
        errorReply(INVALID_REQUEST, `Invalid Request: a line of more than ${maxLineBytes} bytes was skipped (one message per line, at most that long)`),
      ),
  });
  const onData = (chunk: Buffer | string) => lines.push(chunk);
  const onEnd = () => endInput();
  const onError = (error: Error) => {
    transport.onerror?.(error);
    endInput();
  };

  const transport: StdioTransport = {
    ended,
    async start() {
      input.on('data', onData);
      input.once('end', onEnd);
      input.once('close', onEnd);
      input.on('error', onError);
      // A client that closed its end of stdout (EPIPE) cannot read answers: stop, rather than crash on an unheard 'error'.
      output.on('error', onError);
    },
    async send(message) {
      if ('result' in message || 'error' in message) settle(message.id);
      await write(`${JSON.stringify(message)}\n`);
    },
    async close() {
      input.off('data', onData);
      input.off('end', onEnd);
      input.off('close', onEnd);
      input.off('error', onError);
      output.off('error', onError);
      if (input.listenerCount('data') === 0) input.pause();
      lines.reset();
      endInput();
      for (const wake of settledWaiters) wake();
      transport.onclose?.();
    },
    drain: (drainOptions = {}) => waitSettled({ inFlight, settledWaiters, ...drainOptions }),
  };
  return transport;
}

/** How many requests still wait for an answer once all have one, or `timeoutMs` passed, or `signal` aborted. */
async function waitSettled(input: {
  inFlight: ReadonlySet<string>;
  settledWaiters: Set<() => void>;
  timeoutMs?: number;
  signal?: AbortSignal;
}): Promise<number> {
  const { inFlight, settledWaiters } = input;
  const timeoutMs = checkDurationMs(input.timeoutMs ?? DEFAULT_DRAIN_MS, 'timeoutMs');
  if (inFlight.size === 0 || input.signal?.aborted) return inFlight.size;
  let wake!: () => void;
  const woken = new Promise<void>((resolve) => (wake = resolve));
  settledWaiters.add(wake);
  const timer = setTimeout(wake, timeoutMs);
  input.signal?.addEventListener('abort', wake, { once: true });
  try {
    await woken;
    return inFlight.size;
  } finally {
    clearTimeout(timer);
    settledWaiters.delete(wake);
    input.signal?.removeEventListener('abort', wake);
  }
}

/**
 * `wrapStream` of the AI SDK middleware. The model's parts stream through as they come, except memory_read's call
 * (its input parts and the call) and each round's `finish`: when a round ends in memory_read calls only, the middleware
 * runs them, stores the results and streams the next round into the same stream; the one `finish` at the end carries
 * every round's usage.
 */
import type { ToolCall } from '../conversation/types.js';
import { addUsage, type Session } from './ai-sdk-session.js';
import type { CallOptions, StreamPart, StreamResult, Usage, WrappedModel } from './ai-sdk-types.js';

type Finish = Extract<StreamPart, { type: 'finish' }>;

interface Round {
  text: string;
  calls: ToolCall[];
  finish?: Finish;
}

/** Forwards one round's parts, keeping memory_read's to itself; returns what the round said and called. */
async function pumpRound(
  session: Session,
  params: CallOptions,
  reader: ReadableStreamDefaultReader<StreamPart>,
  out: ReadableStreamDefaultController<StreamPart>,
  first: boolean,
): Promise<Round> {
  const round: Round = { text: '', calls: [] };
  const hiddenInputs = new Set<string>();
  for (;;) {
    const { done, value: part } = await reader.read();
    if (done) return round;
    if (part.type === 'finish') round.finish = part;
    else if (part.type === 'stream-start' && !first) continue;
    else if (part.type === 'tool-input-start' && session.isInternal(params, { name: part.toolName })) hiddenInputs.add(part.id);
    else if ((part.type === 'tool-input-delta' || part.type === 'tool-input-end') && hiddenInputs.has(part.id)) continue;
    else if (part.type === 'tool-call' && !part.providerExecuted) {
      round.calls.push({ id: part.toolCallId, type: 'function', function: { name: part.toolName, arguments: part.input } });
      if (!session.isInternal(params, { name: part.toolName })) out.enqueue(part);
    } else {
      if (part.type === 'text-delta') round.text += part.delta;
      out.enqueue(part);
    }
  }
}

export async function streamWithMemory(session: Session, params: CallOptions, model: WrappedModel): Promise<StreamResult> {
  const system = await session.begin(params);
  // The first call is made before returning, so a failing model call fails here, as the SDK's retries expect.
  const first = await model.doStream(await session.callParams(params, system, session.maxMemoryReads > 0));
  /** The reader of the round in progress, cancelled when the app stops reading. */
  let reader = first.stream.getReader();
  let cancelled = false;
  const run = async (out: ReadableStreamDefaultController<StreamPart>) => {
    let usage: Usage | undefined;
    for (let roundIndex = 0; ; roundIndex++) {
      const offerRead = roundIndex < session.maxMemoryReads;
      const round = await pumpRound(session, params, reader, out, roundIndex === 0);
      const roundUsage = round.finish?.usage;
      if (roundUsage) usage = addUsage(usage, roundUsage);
      const reply = { role: 'assistant' as const, content: round.text, ...(round.calls.length > 0 ? { toolCalls: round.calls } : {}) };
      const { reads, others } = await session.settle(params, reply, roundUsage ?? emptyUsage());
      if (reads > 0 && others === 0 && offerRead && round.finish && !cancelled) {
        const next = await model.doStream(await session.callParams(params, system, roundIndex + 1 < session.maxMemoryReads));
        reader = next.stream.getReader();
        continue;
      }
      if (cancelled) return;
      if (round.finish) out.enqueue({ ...round.finish, usage: usage ?? round.finish.usage });
      out.close();
      return;
    }
  };
  return {
    ...first,
    stream: new ReadableStream<StreamPart>({
      start(out) {
        run(out).catch((error: unknown) => {
          if (cancelled) return; // nobody reads the stream any more: the error has no one to go to
          out.enqueue({ type: 'error', error });
          out.close();
        });
      },
      // The app stopped reading: so does the model's stream of the round in progress (what it said is stored).
      cancel: (reason) => {
        cancelled = true;
        return reader.cancel(reason).catch(() => undefined);
      },
    }),
  };
}

function emptyUsage(): Usage {
  return {
    inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: undefined, text: undefined, reasoning: undefined },
  };
}

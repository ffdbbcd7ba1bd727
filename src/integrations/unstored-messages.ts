/**
 * Which messages an SDK hands over are new to memfold, pure. An SDK sends either the whole conversation on every
 * call, or a window of it, or only the new turn; memfold already holds what it stored before. The messages are
 * matched by a key that survives what memfold does to its rows (a tool result by its call id, since tier 2 may clear
 * its output; an assistant turn by its calls, since an SDK may join the text of several model calls into one turn),
 * and the incoming list is aligned on the stored tail: whatever follows the longest stretch that ends where the stored
 * view ends is new.
 */
import type { ConversationMessage, NewMessage } from '../conversation/types.js';

type Keyed = Pick<NewMessage, 'role' | 'content' | 'toolCalls' | 'toolCallId'>;

/** The key a message is matched by: role and text for system and user messages, call ids for the others. */
export function matchKey(message: Keyed): string {
  switch (message.role) {
    case 'tool':
      return `tool\u0000${message.toolCallId ?? ''}`;
    case 'assistant':
      return `assistant\u0000${(message.toolCalls ?? []).map((call) => call.id).join('\u0000')}`;
    default:
      return `${message.role}\u0000${message.content}`;
  }
}

/**
 * The stored history as the SDK saw it: no memfold notes (clip-archive, continuation), no system messages (an
 * integration sends the app's own each call and stores none), and, when a tool is run inside the integration
 * (`hiddenTool`), none of its calls and results: an assistant turn of those calls only is left out, the calls are
 * taken off a turn that also made others.
 */
export function sdkView(history: readonly ConversationMessage[], hiddenTool?: string): Keyed[] {
  const hiddenCalls = new Set<string>();
  const view: Keyed[] = [];
  for (const message of history) {
    if (message.kind === 'clip_archive' || message.kind === 'continuation' || message.role === 'system') continue;
    if (message.role === 'tool') {
      if (!hiddenCalls.has(message.toolCallId ?? '')) view.push(message);
      continue;
    }
    const calls = message.toolCalls ?? [];
    const hidden = calls.filter((call) => call.function.name === hiddenTool);
    for (const call of hidden) hiddenCalls.add(call.id);
    if (hidden.length === 0) view.push(message);
    else if (hidden.length < calls.length) view.push({ ...message, toolCalls: calls.filter((call) => call.function.name !== hiddenTool) });
  }
  return view;
}

/** Messages of the incoming list that must be found in the stored view for a match that does not reach its start. */
const MIN_MATCHED = 3;

/**
 * Whether incoming[0, k) ends where the stored view ends: incoming[k - 1] is the last stored message, and the ones
 * before it are found in the stored view, in order, going back (stored messages the SDK no longer sends, as the AI
 * SDK drops earlier steps' tool calls from `response.messages`, are skipped). The walk stops at the first incoming
 * message not found (older than what is live: archived); a match then needs MIN_MATCHED messages found.
 */
function endsWithStored(stored: readonly string[], incoming: readonly string[], k: number): boolean {
  if (incoming[k - 1] !== stored.at(-1)) return false;
  let s = stored.length - 2;
  let matched = 1;
  for (let i = k - 2; i >= 0; i--) {
    while (s >= 0 && stored[s] !== incoming[i]) s--;
    if (s < 0) break;
    matched++;
    s--;
  }
  return matched === k || matched >= MIN_MATCHED;
}

/**
 * The index of the first new message of `incoming`: after the largest k for which incoming[0, k) ends where the
 * stored view ends (`endsWithStored`). 0 when none does, or nothing was stored: all of it is new.
 */
export function firstUnstored(stored: readonly string[], incoming: readonly string[]): number {
  if (stored.length === 0) return 0;
  for (let k = incoming.length; k > 0; k--) if (endsWithStored(stored, incoming, k)) return k;
  return 0;
}

/** The messages of `incoming` that memfold does not hold yet, by `firstUnstored` over `sdkView(history)`. */
export function unstoredMessages<T extends Keyed>(history: readonly ConversationMessage[], incoming: readonly T[], hiddenTool?: string): T[] {
  const stored = sdkView(history, hiddenTool).map(matchKey);
  return incoming.slice(firstUnstored(stored, incoming.map(matchKey)));
}

/** The tail of each conversation's stores, per memfold: a store waits for the one before it. */
const storeChains = new WeakMap<object, Map<string, Promise<unknown>>>();

/**
 * Appends what `unstoredMessages` finds new, one store at a time per memfold and conversation in this process, so two
 * calls that hand over the same new message at once store it once. Resolves to the history read and the messages
 * appended.
 */
export function storeUnstored<T extends Keyed & NewMessage>(args: {
  memfold: { history(id: string): Promise<ConversationMessage[]>; append(id: string, messages: NewMessage[]): Promise<unknown> };
  conversationId: string;
  incoming: readonly T[];
  hiddenTool?: string | undefined;
}): Promise<{ history: ConversationMessage[]; fresh: T[] }> {
  const { memfold, conversationId } = args;
  const chains = storeChains.get(memfold) ?? new Map<string, Promise<unknown>>();
  storeChains.set(memfold, chains);
  const run = async () => {
    const history = await memfold.history(conversationId);
    const fresh = unstoredMessages(history, args.incoming, args.hiddenTool);
    if (fresh.length > 0) await memfold.append(conversationId, fresh);
    return { history, fresh };
  };
  const previous = chains.get(conversationId) ?? Promise.resolve();
  const next = previous.then(run, run);
  const tail = next.catch(() => undefined);
  chains.set(conversationId, tail);
  // Forget a conversation once its last store is done, so the map holds only stores in flight.
  void tail.then(() => chains.get(conversationId) === tail && chains.delete(conversationId));
  return next;
}

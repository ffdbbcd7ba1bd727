/**
 * Agentic transcripts: do tool calls stay with their results, and do the values the agent learned
 * from tool outputs (the ones the task's ground-truth actions need) survive? Pure.
 */
import type { NewMessage } from '../conversation/types.js';

/** One tool call and the message answering it, as message positions. */
export interface ToolPair {
  call: number;
  result: number;
}

type Message = Pick<NewMessage, 'role' | 'content' | 'toolCalls' | 'toolCallId'>;

/**
 * Calls paired with their results by position, as the chat API does: a tool message answers the
 * first unanswered call of the latest assistant message with the same id (ids repeat across a run).
 */
export function toolPairs(messages: readonly Message[]): ToolPair[] {
  const pairs: ToolPair[] = [];
  let caller = -1;
  let pending: string[] = [];
  messages.forEach((m, i) => {
    if (m.role === 'assistant' && (m.toolCalls?.length ?? 0) > 0) {
      caller = i;
      pending = m.toolCalls!.map((c) => c.id);
    } else if (m.role === 'tool' && caller >= 0) {
      const k = pending.indexOf(m.toolCallId ?? '');
      if (k < 0) return;
      pending.splice(k, 1);
      pairs.push({ call: caller, result: i });
    } else if (m.role !== 'tool') {
      caller = -1;
      pending = [];
    }
  });
  return pairs;
}

/**
 * Pairs split at a checkpoint: one side in the prompt, the other not. Only pairs whose result had
 * been appended (`appended` messages so far) are judged.
 */
export function splitPairs(pairs: readonly ToolPair[], inPrompt: (position: number) => boolean, appended: number): number[] {
  return pairs.flatMap((p, k) => (p.result < appended && inPrompt(p.call) !== inPrompt(p.result) ? [k] : []));
}

/** A value a ground-truth action needs that the agent first saw in a tool output. */
export interface TrackedValue {
  action: string;
  /** The argument's name (for nested lists, the innermost key). */
  key: string;
  value: string;
  /** Position of the tool message where it first appears. */
  firstSeenAt: number;
  /**
   * Position of the first later assistant message that passes it to a tool: the value is judged in the
   * prompt the agent had just before it (the run's length when no call uses it).
   */
  neededAt: number;
}

/** Shorter values (counts, flags) would be found anywhere by chance. */
export const MIN_VALUE_CHARS = 3;

export function messageText(m: Pick<NewMessage, 'content' | 'toolCalls'>): string {
  return [m.content, ...(m.toolCalls ?? []).map((c) => `${c.function.name} ${c.function.arguments}`)].join('\n');
}

function leaves(value: unknown, key: string, out: Array<{ key: string; value: string }>): void {
  if (Array.isArray(value)) value.forEach((v) => leaves(v, key, out));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) leaves(v, k, out);
  else if (typeof value === 'string' || typeof value === 'number') out.push({ key, value: String(value) });
}

export function valuesFromToolOutputs(actions: ReadonlyArray<{ name: string; kwargs: Record<string, unknown> }>, messages: readonly Message[]): TrackedValue[] {
  const texts = messages.map(messageText);
  const seen = new Set<string>();
  const tracked: TrackedValue[] = [];
  for (const action of actions) {
    const found: Array<{ key: string; value: string }> = [];
    leaves(action.kwargs, action.name, found);
    for (const { key, value } of found) {
      if (value.length < MIN_VALUE_CHARS || seen.has(value)) continue;
      seen.add(value);
      const first = texts.findIndex((t) => t.includes(value));
      if (first < 0 || messages[first]!.role !== 'tool') continue;
      const use = messages.findIndex((m, i) => i > first && m.role === 'assistant' && (m.toolCalls ?? []).some((c) => c.function.arguments.includes(value)));
      tracked.push({ action: action.name, key, value, firstSeenAt: first, neededAt: use < 0 ? messages.length : use });
    }
  }
  return tracked;
}

/**
 * What memory_read is asked for a value: the action it is for and the argument's name, in words ("cancel reservation
 * reservation id"), never the value. The agent knows both when it needs the value; the name alone cannot tell one
 * flight number from the others a trajectory mentions.
 */
export function valueQuery(value: Pick<TrackedValue, 'action' | 'key'>): string {
  return `${value.action} ${value.key}`.replace(/[_\W]+/g, ' ').trim();
}

export interface ValueOutcome extends TrackedValue {
  /** The prompt's text at `neededAt` holds the value (verbatim turns or the clip-archive). */
  inPrompt: boolean;
  /** A memory_read search for the action and the argument's name (`valueQuery`) returns an entry holding the value within AVAILABILITY_RANK hits. */
  viaMemory: boolean;
}

export interface RunOutcome {
  runId: string;
  toolPairs: number;
  /** Pairs split at any checkpoint (after each compaction and at the end). */
  splitPairs: number;
  values: ValueOutcome[];
}

export interface AgenticMetrics {
  runs: number;
  toolPairs: number;
  /** Share of tool calls whose call and result were never split (must be 1). */
  pairIntegrity: number;
  values: number;
  valueInPrompt: number;
  valueViaMemory: number;
  /** In the prompt, or else found by memory_read. */
  valueAvailability: number;
}

export function aggregateRuns(outcomes: readonly RunOutcome[]): AgenticMetrics {
  const pairs = outcomes.reduce((n, o) => n + o.toolPairs, 0);
  const split = outcomes.reduce((n, o) => n + o.splitPairs, 0);
  const values = outcomes.flatMap((o) => o.values);
  const share = (test: (v: ValueOutcome) => boolean) => (values.length === 0 ? 0 : values.filter(test).length / values.length);
  return {
    runs: outcomes.length,
    toolPairs: pairs,
    pairIntegrity: pairs === 0 ? 1 : (pairs - split) / pairs,
    values: values.length,
    valueInPrompt: share((v) => v.inPrompt),
    valueViaMemory: share((v) => v.viaMemory),
    valueAvailability: share((v) => v.inPrompt || v.viaMemory),
  };
}

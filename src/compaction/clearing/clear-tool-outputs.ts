/**
 * Tier 2 of compaction, pure: which tool outputs to clear from the live history, the placeholder that takes their
 * place, and the archive entry that keeps each verbatim. A tool output is cleared when it answers a call older than
 * the `keepToolUses` most recent ones, its tool is not in `excludeTools`, it holds at least
 * `clearToolOutputMinTokens` tokens, its placeholder is smaller and its unit holds no pinned message; oldest first, until the history is down to the
 * given mark. The row stays (id, seq, tool call id), so a call and its result are never split.
 */
import type { ConversationMessage, ToolOutputEntry } from '../../conversation/types.js';
import type { ClearedOutput } from '../../persistence/persistence-provider.js';
import type { CompactionSettings } from '../compaction-settings.js';
import { uniqueLabel } from '../format/labels.js';
import { isClipArchive } from '../plan/plan.js';
import { pinnedUnitIds } from '../../conversation/pinned.js';
import { renderTranscript } from '../format/transcript-format.js';

export type ClearingSettings = Pick<CompactionSettings, 'clearToolOutputs' | 'keepToolUses' | 'excludeTools' | 'clearToolOutputMinTokens'>;

/** One tool output chosen for clearing. */
export interface OutputToClear {
  message: ConversationMessage;
  /** Its tokens as the history counts them, whole. */
  tokens: number;
  /** What replacing it by its placeholder saves, estimated before the label is known (a 6-digit hash). */
  freed: number;
}

export interface ClearingSelection {
  outputs: OutputToClear[];
  /** Sum of `freed`. */
  freed: number;
}

export const NO_CLEARING: ClearingSelection = Object.freeze({ outputs: [], freed: 0 }) as ClearingSelection;

/** The text a cleared tool output leaves in the live row: what it was, where it is, how to read it. */
export function clearedPlaceholder(label: string, tokens: number): string {
  return `[Tool output cleared from the context: ${tokens} tokens, archived verbatim as ${label}. memory_read {"label": "${label}"} returns it in full.]`;
}

/** A label as long as most a clearing writes (`o-` minute, 6 hex digits): sizes the placeholder before labels exist. */
const TYPICAL_LABEL = 'o-0000-00-00T00:00-000000';

/** The calls of the body in order, and for each tool result the position of the call it answers (-1 when none). */
function callPositions(body: readonly ConversationMessage[]): { calls: number; callOf: Map<ConversationMessage, { position: number; name?: string }> } {
  const callOf = new Map<ConversationMessage, { position: number; name?: string }>();
  let calls = 0;
  let group = new Map<string, { position: number; name: string }>();
  for (const message of body) {
    if (message.role === 'tool') {
      const call = message.toolCallId === undefined ? undefined : group.get(message.toolCallId);
      callOf.set(message, call ?? { position: -1 });
      continue;
    }
    // A message other than a tool result opens the next group (conversation/tool-groups.ts).
    group = new Map();
    for (const call of message.toolCalls ?? []) group.set(call.id, { position: calls++, name: call.function.name });
  }
  return { calls, callOf };
}

/**
 * The outputs to clear from `history`, oldest first, stopping once the history's tokens (`tokensBefore` less what
 * is freed) are at or under `stopAt`. Nothing when tier 2 is off.
 */
export function selectToolOutputsToClear(
  history: readonly ConversationMessage[],
  settings: ClearingSettings,
  countMessage: (message: ConversationMessage) => number,
  options: { tokensBefore: number; stopAt: number },
): ClearingSelection {
  if (!settings.clearToolOutputs) return NO_CLEARING;
  const body = history.filter((m) => !isClipArchive(m));
  const { calls, callOf } = callPositions(body);
  const recentFrom = calls - settings.keepToolUses;
  const excluded = new Set(settings.excludeTools);
  // A pinned unit is never cleared: its call and results stay as appended.
  const pinned = pinnedUnitIds(body);
  const outputs: OutputToClear[] = [];
  let freed = 0;
  for (const message of body) {
    if (options.tokensBefore - freed <= options.stopAt) break;
    if (message.role !== 'tool' || message.clearedOutputLabel !== undefined || pinned.has(message.id)) continue;
    const call = callOf.get(message)!;
    // A result whose call is unknown is left alone: it cannot be placed among the recent uses.
    if (call.position < 0 || call.position >= recentFrom) continue;
    if (excluded.has(call.name ?? message.name ?? '')) continue;
    const tokens = countMessage(message);
    if (tokens < settings.clearToolOutputMinTokens) continue;
    const saved = tokens - countMessage({ ...message, content: clearedPlaceholder(TYPICAL_LABEL, tokens) });
    if (saved <= 0) continue;
    outputs.push({ message, tokens, freed: saved });
    freed += saved;
  }
  return { outputs, freed };
}

/**
 * The text tier 3's summarizer reads for a tool output tier 2 chose and tier 3 folds in the same compaction. Such an
 * output is never cleared from its row: its transcript segment archives it as appended, so it has no label of its own.
 */
export function foldedPlaceholder(tokens: number): string {
  return `[Tool output left out of this summary: ${tokens} tokens, archived verbatim in the transcript of this part.]`;
}

/**
 * Tier 2's selection split by tier 3's plan: the outputs among the messages tier 3 folds (`folded`: archived verbatim
 * by its transcript segments, so clearing them first would archive them twice and write rows about to leave) and the
 * rest (`kept`: cleared as usual).
 */
export function splitByFold(selection: ClearingSelection, foldedIds: ReadonlySet<string>): { kept: ClearingSelection; folded: ClearingSelection } {
  const part = (outputs: OutputToClear[]): ClearingSelection => ({ outputs, freed: outputs.reduce((sum, o) => sum + o.freed, 0) });
  return {
    kept: part(selection.outputs.filter((o) => !foldedIds.has(o.message.id))),
    folded: part(selection.outputs.filter((o) => foldedIds.has(o.message.id))),
  };
}

/** `history` with each of `folded`'s outputs read as `foldedPlaceholder`: what tier 3 plans and folds on. */
export function withFoldedPlaceholders(history: readonly ConversationMessage[], folded: ClearingSelection): ConversationMessage[] {
  return replacingOutputs(history, folded, (m, tokens) => ({ ...m, content: foldedPlaceholder(tokens) }));
}

/**
 * `history` as it reads once `selection` is cleared, for planning what follows: each output's placeholder under the
 * label a clearing chooses when no label is taken, naming its tokens as `ownCount` (memfold's own count, as the
 * clearing names them) counts them.
 */
export function withPlaceholders(
  history: readonly ConversationMessage[],
  selection: ClearingSelection,
  ownCount: (message: ConversationMessage) => number,
): ConversationMessage[] {
  const messages = selection.outputs.map((o) => o.message);
  const labels = toolOutputLabels(messages);
  return withClearedOutputs(
    history,
    messages.map((m, i) => ({ id: m.id, label: labels[i]!, content: clearedPlaceholder(labels[i]!, ownCount(m)) })),
  );
}

/** `history` with each output of `selection` replaced by `replace(message, its tokens)`. */
function replacingOutputs(
  history: readonly ConversationMessage[],
  selection: ClearingSelection,
  replace: (message: ConversationMessage, tokens: number) => ConversationMessage,
): ConversationMessage[] {
  if (selection.outputs.length === 0) return [...history];
  const tokensOf = new Map(selection.outputs.map((o) => [o.message.id, o.tokens]));
  return history.map((m) => {
    const tokens = tokensOf.get(m.id);
    return tokens === undefined ? m : replace(m, tokens);
  });
}

/** The label of each output's entry, `o-{its minute}-{hash}`, free of `taken` (labels already in the archive). */
export function toolOutputLabels(outputs: readonly ConversationMessage[], taken: ReadonlySet<string> = new Set()): string[] {
  const used = new Set(taken);
  return outputs.map((message) => {
    const label = uniqueLabel({ kind: 'tool_output', depth: 0, time: message.createdAt, sourceIds: [message.id] }, used);
    used.add(label);
    return label;
  });
}

/** The archive entries of a clearing: each output verbatim, one entry each, under `toolOutputLabels`. */
export function toolOutputEntries(
  outputs: readonly ConversationMessage[],
  ids: { conversationId: string; operationId: string },
  taken: ReadonlySet<string> = new Set(),
): ToolOutputEntry[] {
  const labels = toolOutputLabels(outputs, taken);
  return outputs.map((message, i) => {
    const original = { ...message };
    delete original.clearedOutputLabel;
    return {
      kind: 'tool_output',
      label: labels[i]!,
      conversationId: ids.conversationId,
      depth: 0,
      start: message.createdAt,
      end: message.createdAt,
      count: 1,
      content: renderTranscript([original]),
      sourceIds: [message.id],
      operationId: ids.operationId,
      messages: [original],
    };
  });
}

/**
 * What a clearing stores in place of each output: its placeholder, naming the entry's label and the output's tokens
 * (`tokensOf`, memfold's own count, as reconcile counts them).
 */
export function clearedOutputs(entries: readonly ToolOutputEntry[], tokensOf: (messageId: string) => number): ClearedOutput[] {
  return entries.map((e) => {
    const id = e.sourceIds[0]!;
    return { id, label: e.label, content: clearedPlaceholder(e.label, tokensOf(id)) };
  });
}

/** `history` with `cleared` stored, as the live rows read once the clearing commits. */
export function withClearedOutputs(history: readonly ConversationMessage[], cleared: readonly ClearedOutput[]): ConversationMessage[] {
  const byId = new Map(cleared.map((c) => [c.id, c]));
  return history.map((m) => {
    const c = byId.get(m.id);
    return c === undefined ? m : { ...m, content: c.content, clearedOutputLabel: c.label };
  });
}

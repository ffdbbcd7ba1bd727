/**
 * The second look, as an agent takes it: ask memory_read the question, and when the answer names a next call (its
 * "Read the next best with {…}" line: the page its budget left out), make that call too. Scored on both answers
 * together, beside one call (`memfold:second-look` in the report).
 */
import type { ReadVariant } from './run-qa-eval.js';

const NEXT_CALL = /Read the next best with (\{.*?\}), one in full/;

/** The arguments of the follow-up call an answer suggests, or undefined when it suggests none. */
export function suggestedNextCall(answer: string): Record<string, unknown> | undefined {
  const found = NEXT_CALL.exec(answer);
  if (!found) return undefined;
  try {
    const args: unknown = JSON.parse(found[1]!);
    return typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export const SECOND_LOOK: ReadVariant = {
  name: 'second-look',
  tool: (memfold, conversationId) => {
    const tool = memfold.memoryRead(conversationId);
    return {
      async execute(args, asked) {
        const first = await tool.execute(args, asked);
        const next = first.ok ? suggestedNextCall(first.output) : undefined;
        if (next === undefined) return first;
        const second = await tool.execute(next, asked);
        return { ...first, output: `${first.output}\n\n${second.output}` };
      },
    };
  },
};

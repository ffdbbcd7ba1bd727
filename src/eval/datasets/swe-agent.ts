/**
 * SWE-agent trajectories (`.traj` JSON files: a `history` list of `{ role, content, tool_calls?, tool_call_ids? }`)
 * as agentic runs. A run has no ground-truth actions, so the agent's own tool calls stand for them: the values it
 * passed to a tool after first reading them in a tool output (a path, a line number, a name) are the values tracked.
 * A path names one file, or a folder whose `*.traj` files are read in name order.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { NewMessage, Role, ToolCall } from '../../conversation/types.js';
import { InvalidArgumentError } from '../../errors.js';
import type { AgenticRun } from '../eval-types.js';

interface RawMessage {
  role: Role;
  content: string | Array<{ type?: string; text?: string }> | null;
  tool_calls?: ToolCall[] | null;
  tool_call_ids?: string[] | null;
  name?: string;
}

const ROLES: ReadonlySet<string> = new Set<Role>(['system', 'user', 'assistant', 'tool']);

/** Text of a content that may be a string or a list of parts. */
function textOf(content: RawMessage['content']): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => part?.text ?? '').join('');
  return '';
}

/** A trajectory's history as messages a second apart from `start`; errors name the file and the field. */
export function sweAgentMessages(history: readonly RawMessage[], file: string, start = '2024-06-01T09:00:00.000Z'): NewMessage[] {
  const t0 = Date.parse(start);
  return history.map((raw, i) => {
    const at = `${file}.history[${i}]`;
    if (!ROLES.has(raw?.role)) throw new InvalidArgumentError(`${at}.role`, `must be system, user, assistant or tool (got ${JSON.stringify(raw?.role)})`);
    const message: NewMessage = { role: raw.role, content: textOf(raw.content), createdAt: new Date(t0 + i * 1000).toISOString() };
    if (raw.tool_calls && raw.tool_calls.length > 0) {
      message.toolCalls = raw.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.function.name, arguments: c.function.arguments } }));
    }
    if (raw.role === 'tool') {
      const ids = raw.tool_call_ids ?? [];
      if (ids.length !== 1) throw new InvalidArgumentError(`${at}.tool_call_ids`, `must name the one call a tool message answers (got ${ids.length})`);
      message.toolCallId = ids[0]!;
    }
    if (raw.name) message.name = raw.name;
    return message;
  });
}

/** The agent's tool calls as the actions whose values are tracked (arguments that do not parse are left out). */
export function ownActions(messages: readonly NewMessage[]): AgenticRun['actions'] {
  return messages.flatMap((m) =>
    (m.toolCalls ?? []).flatMap((call) => {
      try {
        const kwargs: unknown = JSON.parse(call.function.arguments);
        return kwargs !== null && typeof kwargs === 'object' && !Array.isArray(kwargs)
          ? [{ name: call.function.name, kwargs: kwargs as Record<string, unknown> }]
          : [];
      } catch {
        return [];
      }
    }),
  );
}

async function trajFiles(target: string): Promise<string[]> {
  if (!(await stat(target)).isDirectory()) return [target];
  const names = (await readdir(target)).filter((name) => name.endsWith('.traj')).sort();
  if (names.length === 0) throw new InvalidArgumentError('file', `${target} holds no .traj file`);
  return names.map((name) => path.join(target, name));
}

/** Every trajectory of a `.traj` file or a folder of them, as agentic runs named after their files. */
export async function loadSweAgentRuns(target: string): Promise<AgenticRun[]> {
  const runs: AgenticRun[] = [];
  for (const file of await trajFiles(target)) {
    const name = path.basename(file, '.traj');
    const parsed = JSON.parse(await readFile(file, 'utf8')) as { history?: RawMessage[] };
    if (!Array.isArray(parsed.history)) throw new InvalidArgumentError(`${name}.history`, 'must be the list of messages of a SWE-agent trajectory');
    const messages = sweAgentMessages(parsed.history, name);
    runs.push({ id: name, messages, actions: ownActions(messages) });
  }
  return runs;
}

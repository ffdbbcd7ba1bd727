/**
 * τ-bench trajectories (OpenAI-style messages with tool calls) as memfold messages. Contents may be
 * null; tool call ids may repeat within a run (the pairing is positional, as in the API).
 */
import { readFile } from 'node:fs/promises';
import type { NewMessage, Role, ToolCall } from '../../conversation/types.js';
import type { AgenticRun } from '../eval-types.js';

interface RawMessage {
  role: Role;
  content: string | null;
  tool_calls?: ToolCall[] | null;
  tool_call_id?: string;
  name?: string;
}

export interface TauBenchRun {
  taskId: number;
  messages: NewMessage[];
  /** Ground-truth tool calls of the task (name and arguments). */
  actions: Array<{ name: string; kwargs: Record<string, unknown> }>;
}

export function tauBenchMessages(traj: readonly RawMessage[], start = '2024-05-15T19:00:00.000Z'): NewMessage[] {
  const t0 = Date.parse(start);
  return traj.map((raw, i) => {
    const message: NewMessage = { role: raw.role, content: raw.content ?? '', createdAt: new Date(t0 + i * 1000).toISOString() };
    if (raw.tool_calls && raw.tool_calls.length > 0)
      message.toolCalls = raw.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.function.name, arguments: c.function.arguments } }));
    if (raw.tool_call_id) message.toolCallId = raw.tool_call_id;
    if (raw.name) message.name = raw.name;
    return message;
  });
}

export async function loadTauBench(file: string): Promise<TauBenchRun[]> {
  const runs = JSON.parse(await readFile(file, 'utf8')) as Array<{
    task_id: number;
    traj: RawMessage[];
    info?: { task?: { actions?: TauBenchRun['actions'] } };
  }>;
  return runs.map((run) => ({ taskId: run.task_id, messages: tauBenchMessages(run.traj), actions: run.info?.task?.actions ?? [] }));
}

/** Runs as evaluation input; ids name the run's position and task (a task is run several times). */
export function tauBenchAgenticRuns(runs: readonly TauBenchRun[]): AgenticRun[] {
  return runs.map((run, i) => ({ id: `run-${i}-task-${run.taskId}`, messages: run.messages, actions: run.actions }));
}

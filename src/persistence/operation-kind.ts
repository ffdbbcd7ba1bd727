/** The operation kinds the journal records (`migrations/006_operation_kind.sql`, `009_erase_operation.sql`), checked the same way by every adapter. */
import { InvalidArgumentError } from '../errors.js';
import type { OperationKind } from './persistence-provider.js';

const KINDS: ReadonlySet<string> = new Set<OperationKind>(['compaction', 'clear_tool_outputs', 'erase']);

/** An operation's kind, checked; `compaction` when absent. */
export function requireOperationKind(kind: unknown): OperationKind {
  if (kind === undefined) return 'compaction';
  if (!KINDS.has(kind as string)) {
    throw new InvalidArgumentError('operation.kind', `must be one of ${[...KINDS].join(', ')}; got ${JSON.stringify(kind)}`);
  }
  return kind as OperationKind;
}

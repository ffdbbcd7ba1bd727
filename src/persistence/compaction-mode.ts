/** The compaction modes an operation row may record, checked the same way by every adapter. */
import { describeValue } from '../conversation/text.js';
import { InvalidArgumentError } from '../errors.js';
import type { CompactionMode } from './persistence-provider.js';

/** Every mode, so that the type system makes this list complete. */
const MODES: Record<CompactionMode, true> = { delete: true, overlay: true };

/** `value` as a mode; undefined stays undefined (the caller's default applies). Refused naming `field`. */
export function optionalCompactionMode(value: unknown, field: string): CompactionMode | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && Object.hasOwn(MODES, value)) return value as CompactionMode;
  throw new InvalidArgumentError(field, `must be one of ${Object.keys(MODES).join(', ')}; got ${describeValue(value)}`);
}

/** The error for a write naming another mode than the operation's recorded one. */
export function modeMismatch(field: string, operationId: string, recorded: CompactionMode, given: CompactionMode): InvalidArgumentError {
  return new InvalidArgumentError(field, `operation ${JSON.stringify(operationId)} was recorded in ${recorded} mode, not ${given}`);
}

/** `countLive`'s options and `setPinned`'s flag, checked the same way by every store. */
import { InvalidArgumentError } from '../errors.js';
import type { CountLiveOptions } from './persistence-provider.js';

/** Whether only cleared tool outputs are counted; refuses options that are not an object, or a non-boolean `clearedOnly`. */
export function requireCountLiveOptions(options: CountLiveOptions): boolean {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('options', 'must be an object');
  const { clearedOnly = false } = options;
  if (typeof clearedOnly !== 'boolean') throw new InvalidArgumentError('options.clearedOnly', 'must be a boolean');
  return clearedOnly;
}

/** `setPinned`'s flag, checked the same way by every store. */
export function requirePinnedFlag(pinned: unknown): asserts pinned is boolean {
  if (typeof pinned !== 'boolean') throw new InvalidArgumentError('pinned', 'must be a boolean');
}

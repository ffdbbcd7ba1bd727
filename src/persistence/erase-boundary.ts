/** The boundary an erase removes messages up to (`EraseConversationOptions.throughSeq`), checked. */
import { InvalidArgumentError } from '../errors.js';

export function requireEraseBoundary(throughSeq: number | undefined): number | undefined {
  if (throughSeq === undefined) return undefined;
  if (!(Number.isSafeInteger(throughSeq) && throughSeq >= 0)) {
    throw new InvalidArgumentError('throughSeq', `must be an integer >= 0 (the last seq the erase removes); got ${String(throughSeq)}`);
  }
  return throughSeq;
}

/**
 * A conversation's calibration by the assistant's reported usage (`Compactor.observeUsage`): the provider's prompt
 * tokens of a request over memfold's own count of the context the request was built from. Clamped to
 * CALIBRATION_RANGE: never below 1, since the request also carries what memfold does not count (tool definitions,
 * the chat format) and an estimate above the provider's count is the safe side; at most 5, so one odd usage figure
 * cannot make a conversation compact at every turn. Pure.
 */
import { InvalidArgumentError } from '../errors.js';
import { describeValue } from '../conversation/text.js';

/** Bounds of a calibration factor. */
export const CALIBRATION_RANGE = Object.freeze({ min: 1, max: 5 });

/** The largest prompt or estimated token count kept (the `integer` columns of the live store). */
export const MAX_CALIBRATION_TOKENS = 2_147_483_647;

/** promptTokens / estimatedTokens, clamped to CALIBRATION_RANGE. `estimatedTokens` must be positive. */
export function calibrationFactor(promptTokens: number, estimatedTokens: number): number {
  return Math.min(CALIBRATION_RANGE.max, Math.max(CALIBRATION_RANGE.min, promptTokens / estimatedTokens));
}

/** A count of memfold's, calibrated: rounded, never below the count itself (the factor is at least 1). */
export function calibrated(tokens: number, factor: number): number {
  return factor === 1 ? tokens : Math.round(tokens * factor);
}

/** A token count given by a caller: an integer from 1 to MAX_CALIBRATION_TOKENS, else refused naming `field`. */
export function requireTokenCount(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_CALIBRATION_TOKENS) {
    throw new InvalidArgumentError(field, `must be a positive integer (at most ${MAX_CALIBRATION_TOKENS}), got ${describeValue(value)}`);
  }
  return value;
}

/** A calibration factor given to a store: a number within CALIBRATION_RANGE, else refused naming `field`. */
export function requireFactor(value: unknown, field: string): number {
  if (typeof value !== 'number' || !(value >= CALIBRATION_RANGE.min && value <= CALIBRATION_RANGE.max)) {
    throw new InvalidArgumentError(field, `must be a number from ${CALIBRATION_RANGE.min} to ${CALIBRATION_RANGE.max}, got ${describeValue(value)}`);
  }
  return value;
}

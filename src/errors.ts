/**
 * One error base class for the whole library. `code` lets callers tell failures apart;
 * `MemfoldError.isInstance` works across duplicate copies of the package (it checks a marker, not the prototype).
 */
const MARKER = Symbol.for('memfold.error');

export type MemfoldErrorCode =
  | 'invalid_argument'
  | 'invalid_config'
  | 'model_error'
  | 'embedding_error'
  | 'archive_error'
  | 'persistence_error'
  /** The live store belongs to another archive than the one this process opened (see `archive-binding.ts`). */
  | 'archive_mismatch'
  | 'busy'
  | 'not_found';

export class MemfoldError extends Error {
  readonly [MARKER] = true;
  readonly code: MemfoldErrorCode;
  /** Whether retrying the same call may succeed (set by the adapter that saw the failure). */
  readonly retryable: boolean;
  readonly details: Record<string, unknown>;

  constructor(code: MemfoldErrorCode, message: string, options: { cause?: unknown; retryable?: boolean; details?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'MemfoldError';
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.details = options.details ?? {};
  }

  static isInstance(error: unknown): error is MemfoldError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[MARKER] === true;
  }
}

/** Bad input at a public boundary. The message names the field and the rule. */
export class InvalidArgumentError extends MemfoldError {
  readonly field: string;
  constructor(field: string, rule: string, options: { cause?: unknown } = {}) {
    super('invalid_argument', `Invalid argument ${field}: ${rule}`, { ...options, details: { field } });
    this.name = 'InvalidArgumentError';
    this.field = field;
  }
}

/** Bad configuration. The message names the setting and the rule. */
export class InvalidConfigError extends MemfoldError {
  readonly field: string;
  constructor(field: string, rule: string) {
    super('invalid_config', `Invalid config field ${field}: ${rule}`, { details: { field } });
    this.name = 'InvalidConfigError';
    this.field = field;
  }
}

/** The message of any thrown value, for results that carry errors as data. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A short reason for an error: the adapter's `details.reason` (e.g. `http 429`, `timeout`), else its message. */
export function failureReason(error: unknown): string {
  if (MemfoldError.isInstance(error) && typeof error.details['reason'] === 'string') return error.details['reason'];
  return errorMessage(error).slice(0, 80);
}

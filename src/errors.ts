/**
 * One error base class for the whole library. `code` lets callers tell failures apart. Every error class has a
 * static `isInstance(value)` that works across duplicate copies of the package: it checks markers the error carries
 * (a registered symbol and the `kind` of each class in its chain), not the prototype, which `instanceof` would.
 */
const MARKER = Symbol.for('memfold.error');
const KINDS = Symbol.for('memfold.error.kinds');

export type MemfoldErrorCode =
  | 'invalid_argument'
  | 'invalid_config'
  | 'model_error'
  | 'embedding_error'
  | 'archive_error'
  | 'persistence_error'
  /** The live store belongs to another archive than the one this process opened (see `archive-binding.ts`). */
  | 'archive_mismatch'
  /** A compaction failed (its result says where: `CompactionResult.failureCode`); nothing was lost. */
  | 'compaction_failed'
  | 'busy'
  | 'not_found';

type ErrorClass<E extends MemfoldError> = (abstract new (...args: never[]) => E) & { readonly kind: string };

export class MemfoldError extends Error {
  /** Names the class across package copies; every subclass declares its own (`memfold.<ClassName>`). */
  static readonly kind: string = 'memfold.MemfoldError';
  readonly [MARKER] = true;
  /** The `kind` of this error's class and of each class above it, up to MemfoldError. */
  readonly [KINDS]: readonly string[];
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
    const kinds: string[] = [];
    for (let c: unknown = new.target; typeof c === 'function' && Object.hasOwn(c, 'kind'); c = Object.getPrototypeOf(c)) {
      kinds.push((c as unknown as { kind: string }).kind);
    }
    this[KINDS] = kinds;
  }

  /** Whether `value` is an error of this class (or a subclass), from this copy of memfold or another. */
  static isInstance<E extends MemfoldError>(this: ErrorClass<E>, value: unknown): value is E {
    if (typeof value !== 'object' || value === null || (value as Record<symbol, unknown>)[MARKER] !== true) return false;
    const kinds = (value as Record<symbol, unknown>)[KINDS];
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class isInstance is called on (InvalidArgumentError.isInstance), whose kind is checked.
    return Array.isArray(kinds) && kinds.includes(this.kind);
  }
}

/** Bad input at a public boundary. The message names the field and the rule. */
export class InvalidArgumentError extends MemfoldError {
  static override readonly kind: string = 'memfold.InvalidArgumentError';
  readonly field: string;
  constructor(field: string, rule: string, options: { cause?: unknown } = {}) {
    super('invalid_argument', `Invalid argument ${field}: ${rule}`, { ...options, details: { field } });
    this.name = 'InvalidArgumentError';
    this.field = field;
  }
}

/** Bad configuration. The message names the setting and the rule. */
export class InvalidConfigError extends MemfoldError {
  static override readonly kind: string = 'memfold.InvalidConfigError';
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

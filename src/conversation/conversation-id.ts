/**
 * The one conversation-id rule, pure: a string, not blank, that PostgreSQL stores unchanged (no U+0000, no lone
 * surrogate) and that fits an index key (at most MAX_KEY_BYTES of UTF-8). Every boundary that takes a conversation
 * id (the library, the live stores, the tools, the MCP scope, the CLI import) checks it here, so an id one
 * accepts, every other accepts too. The error names the field.
 */
import { InvalidArgumentError } from '../errors.js';
import { describeValue, MAX_KEY_BYTES, storedTextProblem } from './text.js';
import { valueOnDemand, zod } from '../zod-on-demand.js';

/** Why `value` cannot be a conversation id, or undefined when it can. */
export function conversationIdProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return `must be a string, got ${describeValue(value)}`;
  if (value !== '' && value.trim() === '') return 'must not be blank';
  return storedTextProblem(value, { maxKeyBytes: MAX_KEY_BYTES });
}

/** The rule as a zod schema, for the boundaries parsed with one. */
export const conversationIdSchema = valueOnDemand(() =>
  zod()
    .custom<string>()
    .check((ctx) => {
      const problem = conversationIdProblem(ctx.value);
      if (problem !== undefined) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value });
    }),
);

/**
 * `value` as a conversation id, else an error naming `field` (default `conversationId`): InvalidArgumentError,
 * unless `toError` builds another (InvalidConfigError for configuration).
 */
export function requireConversationId(
  value: unknown,
  field = 'conversationId',
  toError: (field: string, rule: string) => Error = (f, r) => new InvalidArgumentError(f, r),
): string {
  const problem = conversationIdProblem(value);
  if (problem !== undefined) throw toError(field, problem);
  return value as string;
}

/**
 * zod issues as the project's errors, pure: every boundary parsed with a zod schema reports the first
 * problem as one error naming the field path (`messages[3].toolCalls[0].function.name`, `line 3.created_at`,
 * `MEMFOLD_MODEL_TIMEOUT_MS`) and the rule. Schemas spell their rules in the project's words (`must be ...`);
 * a type mismatch without a custom message is worded here, showing the value given.
 */
import type { z } from 'zod';
import { InvalidArgumentError } from '../errors.js';
import { describeValue } from './text.js';

/** `prefix` followed by the path: keys as `.key`, indices as `[i]`. */
export function issuePath(path: readonly PropertyKey[], prefix = ''): string {
  let field = prefix;
  for (const key of path) {
    if (typeof key === 'number') field += `[${key}]`;
    else field += field === '' ? String(key) : `.${String(key)}`;
  }
  return field;
}

const WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
};

/** The rule an issue states, in the project's words when the schema gave none. */
function issueRule(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type' && issue.message.startsWith('Invalid input')) {
    return `must be ${WORDS[issue.expected] ?? issue.expected}, got ${describeValue(issue.input)}`;
  }
  return issue.message;
}

export interface SchemaIssue {
  /** The field path, prefixed as the boundary names its input. */
  field: string;
  rule: string;
}

/**
 * The issue to report. An unknown field comes first (the fields next to it may be misspellings of
 * it); then the issues in the order of the schema's fields.
 */
export function firstIssue(error: z.ZodError, prefix = ''): SchemaIssue {
  const issues = error.issues;
  const unknown = issues.find((issue) => issue.code === 'unrecognized_keys');
  if (unknown !== undefined && unknown.code === 'unrecognized_keys') {
    return { field: issuePath([...unknown.path, unknown.keys[0]!], prefix), rule: unknown.message };
  }
  const issue = issues[0]!;
  return { field: issuePath(issue.path, prefix), rule: issueRule(issue) };
}

/**
 * `schema.parse(value)` that throws the boundary's own error for the first issue: InvalidArgumentError
 * unless `toError` builds another (InvalidConfigError for configuration).
 */
export function parseWithSchema<S extends z.ZodType>(
  schema: S,
  value: unknown,
  options: { prefix?: string; toError?: (field: string, rule: string) => Error } = {},
): z.output<S> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  const { field, rule } = firstIssue(result.error, options.prefix);
  throw (options.toError ?? ((f: string, r: string) => new InvalidArgumentError(f, r)))(field, rule);
}

/**
 * What every tool's arguments share, pure: the input a model sends (an object or its JSON text, `null` meaning
 * absent) and a text argument's rules. Errors name the argument and the rule.
 */
import type { z } from 'zod';
import { errorMessage, InvalidArgumentError } from '../errors.js';
import { textProblem } from '../conversation/well-formed-text.js';
import { zod } from '../zod-on-demand.js';

/** A non-blank string a model may send, without U+0000 or half an emoji (refused here rather than deep in a search). */
export function argumentText(maxLength: number) {
  return zod()
    .string({ error: 'must be a string' })
    .max(maxLength, `must be at most ${maxLength} characters`)
    .refine((value) => value.trim() !== '', 'must not be empty')
    .check((ctx) => {
      const problem = textProblem(ctx.value);
      if (problem !== undefined) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value });
    });
}

/** Parsed arguments as a tool's handler sees them: an argument a schema may leave absent is absent, never `undefined`. */
export type PresentArgs<T> = { [K in keyof T]: Exclude<T[K], undefined> };

/** The arguments object from the parsed object or the JSON string a model sends, with `null` arguments left out. */
export function toolArgumentsObject(input: unknown): Record<string, unknown> {
  let raw: unknown = input;
  if (typeof input === 'string') {
    try {
      raw = JSON.parse(input);
    } catch {
      throw new InvalidArgumentError('arguments', 'must be a JSON object');
    }
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new InvalidArgumentError('arguments', 'must be an object');
  return Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== null));
}

/** The JSON schema of a tool's arguments (a definition's `parameters`), from the schema that parses them. */
export function toolParameters(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...parameters } = zod().toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  return parameters;
}

/** What a tool answers: `ok` false with `error` on refused arguments or a failure; `output` is what the model reads. */
export interface ToolResult {
  ok: boolean;
  output: string;
  error?: string;
}

/**
 * A tool call that never throws: `input` parsed (a refusal answered with the rule it broke, naming the argument),
 * then `handle`d; a throw there answered as `<tool> failed: <why>`.
 */
export async function runTool<A>(tool: string, input: unknown, parse: (input: unknown) => A, handle: (args: A) => Promise<ToolResult>): Promise<ToolResult> {
  let args: A;
  try {
    args = parse(input);
  } catch (error) {
    return { ok: false, output: errorMessage(error), error: errorMessage(error) };
  }
  try {
    return await handle(args);
  } catch (error) {
    return { ok: false, output: `${tool} failed: ${errorMessage(error)}`, error: errorMessage(error) };
  }
}

/**
 * A tool definition in the shape each OpenAI API takes, pure: Chat Completions nests it under `function`, the
 * Responses API takes it flat. Strict mode (Structured Outputs for function calls) wants every property required,
 * the optional ones nullable, no `default`, and no other properties: `strictParameters` makes that of a tool's
 * JSON schema, whose parser already reads `null` as absent. Every object returned is frozen, so no caller can change
 * another's definition.
 */

import { onDemand } from '../zod-on-demand.js';

/** A tool definition in the Chat Completions shape: what every memfold tool defines, and what the others derive from. */
export interface FunctionToolDefinition {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export type ToolFormat = 'chat' | 'responses';

/** Chat Completions: `{ type: 'function', function: { name, description, parameters, strict? } }`. */
export interface ChatToolDefinition {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown>; strict?: boolean };
}

/** Responses API: `{ type: 'function', name, description, parameters, strict }`. */
export interface ResponsesToolDefinition {
  type: 'function';
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  strict: boolean;
}

type Schema = Record<string, unknown>;

/** A property's schema that also accepts `null`, its `default` left out (a strict call always sends the field). */
function nullable(property: Schema): Schema {
  const { default: _, ...rest } = property;
  if (Array.isArray(rest.anyOf)) return { ...rest, anyOf: [...(rest.anyOf as Schema[]), { type: 'null' }] };
  const type = rest.type;
  const withNull = { ...rest, type: Array.isArray(type) ? [...new Set([...type, 'null'])] : [type, 'null'] };
  return Array.isArray(rest.enum) ? { ...withNull, enum: [...(rest.enum as unknown[]), null] } : withNull;
}

/** The strict form of an object schema: every property required, the ones that were optional nullable, none other allowed. */
export function strictParameters(parameters: Schema): Schema {
  const properties = (parameters.properties ?? {}) as Record<string, Schema>;
  const required = new Set((parameters.required ?? []) as string[]);
  const strict = Object.fromEntries(
    Object.entries(properties).map(([key, property]) => [key, required.has(key) ? withoutDefault(property) : nullable(property)]),
  );
  return { ...parameters, properties: strict, required: Object.keys(properties), additionalProperties: false };
}

function withoutDefault(property: Schema): Schema {
  const { default: _, ...rest } = property;
  return rest;
}

/** Freeze `value` and everything in it. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** A fresh copy, frozen throughout. */
function frozenCopy<T>(value: T): T {
  return deepFreeze(structuredClone(value));
}

/**
 * `definition` in the shape `format` takes; `strict` (default false) turns on strict mode with `strictParameters`.
 * The result is frozen.
 */
export function definitionFor(definition: FunctionToolDefinition, format: 'chat', options?: { strict?: boolean }): ChatToolDefinition;
export function definitionFor(definition: FunctionToolDefinition, format: 'responses', options?: { strict?: boolean }): ResponsesToolDefinition;
export function definitionFor(
  definition: FunctionToolDefinition,
  format: ToolFormat,
  options: { strict?: boolean } = {},
): ChatToolDefinition | ResponsesToolDefinition {
  const strict = options.strict ?? false;
  const { name, description, parameters } = definition.function;
  const shaped = strict ? strictParameters(parameters) : parameters;
  if (format === 'responses') return frozenCopy({ type: 'function', name, description, parameters: shaped, strict });
  return frozenCopy({ type: 'function', function: { name, description, parameters: shaped, ...(strict ? { strict: true } : {}) } });
}

/**
 * A frozen definition whose `parameters` (the JSON schema made from the tool's zod schema) are made, frozen, when first
 * read: defining a tool then loads no zod.
 */
export function definitionOnDemand(head: { name: string; description: string }, parameters: () => Record<string, unknown>): FunctionToolDefinition {
  const made = onDemand(() => frozenCopy(parameters()));
  const fn = Object.defineProperty({ ...head }, 'parameters', { get: made, enumerable: true }) as FunctionToolDefinition['function'];
  return Object.freeze({ type: 'function', function: Object.freeze(fn) });
}

/** What a tool offers beside its `definition`: the definition in the shape each API takes (`definitionFor`). */
export interface ShapedDefinitions {
  definitionFor(format: 'chat', options?: { strict?: boolean }): ChatToolDefinition;
  definitionFor(format: 'responses', options?: { strict?: boolean }): ResponsesToolDefinition;
}

/** `definitionFor` bound to one tool's definition. */
export function shapedDefinitions(definition: FunctionToolDefinition): ShapedDefinitions['definitionFor'] {
  return ((format: ToolFormat, options?: { strict?: boolean }) =>
    format === 'responses'
      ? definitionFor(definition, 'responses', options)
      : definitionFor(definition, 'chat', options)) as ShapedDefinitions['definitionFor'];
}

/**
 * The AI SDK's language-model types this folder reads, derived from what `ai` exports (its middleware type), so
 * memfold needs `ai` alone and not the `@ai-sdk/provider` package it re-exports them from. Types only.
 */
import type { LanguageModelMiddleware } from 'ai';

type WrapGenerate = NonNullable<LanguageModelMiddleware['wrapGenerate']>;
type WrapStream = NonNullable<LanguageModelMiddleware['wrapStream']>;

/** `LanguageModelV4CallOptions`: what a model call is sent. */
export type CallOptions = Parameters<WrapGenerate>[0]['params'];
/** `LanguageModelV4`: the model being wrapped. */
export type WrappedModel = Parameters<WrapGenerate>[0]['model'];
/** `LanguageModelV4Message`: one message of a call's prompt. */
export type PromptMessage = CallOptions['prompt'][number];
/** `LanguageModelV4GenerateResult`. */
export type GenerateResult = Awaited<ReturnType<WrapGenerate>>;
/** `LanguageModelV4Content`: one part of what a model answered. */
export type ResultContent = GenerateResult['content'][number];
/** `LanguageModelV4Usage`. */
export type Usage = GenerateResult['usage'];
/** `LanguageModelV4StreamResult`. */
export type StreamResult = Awaited<ReturnType<WrapStream>>;
/** `LanguageModelV4StreamPart`. */
export type StreamPart = StreamResult['stream'] extends ReadableStream<infer Part> ? Part : never;
/** `LanguageModelV4FunctionTool`. */
export type FunctionTool = Extract<NonNullable<CallOptions['tools']>[number], { type: 'function' }>;

/**
 * `memfold eval --answer-model M --judge-model J`: the answer-accuracy settings from the flags and the environment.
 * Both models use memfold's endpoint (`MEMFOLD_OPENAI_BASE_URL`, else `OPENAI_BASE_URL`; the key likewise) and its
 * call limits (timeout, retries, deadline, concurrency). `--answer-base-url` / `--judge-base-url` point one at another
 * endpoint; its key is then read from the variable `--answer-api-key-env` / `--judge-api-key-env` names, never
 * memfold's own (a key is not sent to a host it was not given for), and never from a flag (argv is visible to others).
 */
import { resolveRuntimeConfig } from '../../config.js';
import { InvalidArgumentError } from '../../errors.js';
import { ANSWER_RESERVE_TOKENS, type AnswerAccuracyOptions } from '../../eval/answer-accuracy/answer-accuracy.js';
import type { EndpointSettings } from '../../eval/answer-accuracy/chat-endpoint.js';
import type { ParsedCommand } from '../args.js';

type Flags = ParsedCommand['flags'];
type Env = Record<string, string | undefined>;

function endpointOf(role: 'answer' | 'judge', flags: Flags, env: Env, shared: { baseURL?: string; apiKey?: string }): EndpointSettings {
  const model = flags[`${role}-model`] as string;
  const baseURL = flags[`${role}-base-url`];
  const keyVariable = flags[`${role}-api-key-env`];
  if (typeof keyVariable === 'string' && typeof baseURL !== 'string')
    throw new InvalidArgumentError(`--${role}-api-key-env`, `needs --${role}-base-url (without it the ${role} model uses memfold's endpoint and key)`);
  if (typeof baseURL !== 'string') return { model, ...shared };
  if (!/^https?:\/\//i.test(baseURL)) throw new InvalidArgumentError(`--${role}-base-url`, `must be an http:// or https:// URL (got "${baseURL}")`);
  let apiKey: string | undefined;
  if (typeof keyVariable === 'string') {
    apiKey = env[keyVariable]?.trim();
    if (!apiKey) throw new InvalidArgumentError(`--${role}-api-key-env`, `names ${keyVariable}, which is not set`);
  }
  return { model, baseURL, ...(apiKey ? { apiKey } : {}) };
}

/** The answer-accuracy options, or undefined when neither model is named; both or neither. */
export function answerAccuracyOf(flags: Flags, env: Env = process.env): AnswerAccuracyOptions | undefined {
  const answer = typeof flags['answer-model'] === 'string';
  const judge = typeof flags['judge-model'] === 'string';
  if (!answer && !judge) {
    for (const flag of ['answer-base-url', 'judge-base-url', 'answer-api-key-env', 'judge-api-key-env', 'answer-window'])
      if (flags[flag] !== undefined) throw new InvalidArgumentError(`--${flag}`, 'needs --answer-model and --judge-model');
    return undefined;
  }
  if (!answer) throw new InvalidArgumentError('--answer-model', 'is required with --judge-model');
  if (!judge) throw new InvalidArgumentError('--judge-model', 'is required with --answer-model');
  const config = resolveRuntimeConfig({}, env);
  const shared = {
    ...(config.openaiBaseUrl !== undefined ? { baseURL: config.openaiBaseUrl } : {}),
    ...(config.openaiApiKey !== undefined ? { apiKey: config.openaiApiKey } : {}),
  };
  const window = flags['answer-window'];
  if (typeof window === 'number' && window < ANSWER_RESERVE_TOKENS + 256)
    throw new InvalidArgumentError(
      '--answer-window',
      `must be at least ${ANSWER_RESERVE_TOKENS + 256} (the system prompt, question and answer take ${ANSWER_RESERVE_TOKENS})`,
    );
  return {
    answer: endpointOf('answer', flags, env, shared),
    judge: endpointOf('judge', flags, env, shared),
    ...(typeof window === 'number' ? { answerWindow: window } : {}),
    limits: {
      timeoutMs: config.modelTimeoutMs,
      maxRetries: config.modelMaxRetries,
      deadlineMs: config.modelDeadlineMs,
      concurrency: config.modelConcurrency,
    },
  };
}

/**
 * The `openai` package, loaded on the first request rather than when memfold is imported: a memfold
 * with no remote summarizer or embedder never loads it.
 */
import type OpenAI from 'openai';
import type { ClientOptions } from 'openai';

type OpenAIModule = typeof import('openai');

let loaded: OpenAIModule | undefined;

async function loadOpenAI(): Promise<OpenAIModule> {
  loaded ??= await import('openai');
  return loaded;
}

/**
 * The package once a client has been made, else undefined. An error of the `openai` client can only
 * exist after that, so error classification needs nothing more.
 */
export function loadedOpenAI(): OpenAIModule | undefined {
  return loaded;
}

/** A function returning the one client made with `options`, created (and the package loaded) on its first call. */
export function lazyOpenAIClient(options: ClientOptions): () => Promise<OpenAI> {
  let client: Promise<OpenAI> | undefined;
  return () => {
    client ??= loadOpenAI().then((sdk) => new sdk.default(options));
    return client;
  };
}

/**
 * Wait until `client` is made (the package loaded), ignoring a failure (the request that uses it reports it). Called
 * before a request takes its queue slot: with a rate limit, a first request would otherwise spend its start slot
 * loading the package and reach the server late, shortening the gap to the next one.
 */
export async function clientReady(client: () => Promise<unknown>): Promise<void> {
  await client().catch(() => undefined);
}

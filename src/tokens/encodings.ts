/**
 * Which tokenizer a model uses, and the encoders themselves: loaded on first use (only the ranks
 * needed), then cached for the life of the process.
 */
import { createRequire } from 'node:module';
import type { Tiktoken, TiktokenBPE } from 'js-tiktoken/lite';

export type EncodingName = 'o200k_base' | 'cl100k_base';

const O200K = /^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4)/;
const CL100K = /^(gpt-4|gpt-3\.5|gpt-35)/;

/**
 * The encoding of a model, or undefined when unknown. Provider prefixes are ignored
 * (`openai/gpt-4o`, `openai:gpt-4o` and `gpt-4o` all give `o200k_base`).
 */
export function encodingForModel(model: string): EncodingName | undefined {
  const name = model.trim().toLowerCase().split(/[/:]/).pop() ?? '';
  if (O200K.test(name)) return 'o200k_base';
  if (CL100K.test(name)) return 'cl100k_base';
  return undefined;
}

const require = createRequire(import.meta.url);
const cache = new Map<EncodingName, Tiktoken>();

/** The encoder for an encoding; the first call loads its ranks (a few hundred ms), later calls are free. */
export function getEncoder(name: EncodingName): Tiktoken {
  let encoder = cache.get(name);
  if (!encoder) {
    const loaded = require(`js-tiktoken/ranks/${name}`) as TiktokenBPE | { default: TiktokenBPE };
    const ranks = 'default' in loaded ? loaded.default : loaded;
    // The encoder class too is loaded here, with its ranks: importing memfold does not load the tokenizer.
    const { Tiktoken: Encoder } = require('js-tiktoken/lite') as typeof import('js-tiktoken/lite');
    encoder = new Encoder(ranks);
    cache.set(name, encoder);
  }
  return encoder;
}

/** The encodings whose ranks this process has loaded (tests check that the estimate loads none). */
export function loadedEncodings(): EncodingName[] {
  return [...cache.keys()];
}

/** Exact token count; special-token text (`<|endoftext|>`) is counted as ordinary text, never rejected. */
export function countWith(encoder: Tiktoken, text: string): number {
  return text === '' ? 0 : encoder.encode(text, [], []).length;
}

/**
 * The objects of a file holding one JSON array, read one at a time: LongMemEval's _M file (about 2.7 GB) is
 * larger than a JavaScript string may be, so it cannot be read whole and parsed. A small scanner finds where
 * each top-level element begins and ends (strings and escapes followed), and only that element is parsed.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { InvalidArgumentError } from '../../errors.js';

/** Each top-level element of the array in `path`, parsed; `field` names the file in errors. */
export async function* streamJsonArray(path: string, field = '<file>'): AsyncGenerator<unknown> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw new InvalidArgumentError(field, `cannot be read: ${(error as Error).message}`);
  }
  const stream = handle.createReadStream({ encoding: 'utf8', highWaterMark: 1 << 20 });
  let started = false;
  let ended = false;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let pieces: string[] = [];
  let index = 0;
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      let from = -1;
      for (let i = 0; i < chunk.length; i++) {
        const c = chunk[i]!;
        if (inString) {
          if (escaped) escaped = false;
          else if (c === '\\') escaped = true;
          else if (c === '"') inString = false;
          continue;
        }
        if (!started) {
          if (c === '[') started = true;
          else if (!/\s/.test(c) && c !== '\uFEFF') throw new InvalidArgumentError(field, 'must hold a JSON array');
          continue;
        }
        if (ended) {
          if (!/\s/.test(c)) throw new InvalidArgumentError(field, 'holds text after its JSON array');
          continue;
        }
        if (depth === 0) {
          if (c === ']') ended = true;
          else if (c === '{' || c === '[') {
            depth = 1;
            from = i;
          } else if (c !== ',' && !/\s/.test(c)) throw new InvalidArgumentError(`${field}[${index}]`, 'must be a JSON object');
          continue;
        }
        if (c === '"') inString = true;
        else if (c === '{' || c === '[') depth++;
        else if (c === '}' || c === ']') {
          depth--;
          if (depth === 0) {
            pieces.push(chunk.slice(Math.max(from, 0), i + 1));
            const text = pieces.join('');
            pieces = [];
            from = -1;
            let value: unknown;
            try {
              value = JSON.parse(text);
            } catch (error) {
              throw new InvalidArgumentError(`${field}[${index}]`, `is not valid JSON: ${(error as Error).message}`);
            }
            index++;
            yield value;
          }
        }
      }
      if (depth > 0) pieces.push(chunk.slice(Math.max(from, 0)));
    }
  } catch (error) {
    if (InvalidArgumentError.isInstance(error)) throw error;
    throw new InvalidArgumentError(field, `cannot be read: ${(error as Error).message}`);
  } finally {
    stream.destroy();
    await handle.close().catch(() => undefined);
  }
  if (!started || !ended) throw new InvalidArgumentError(field, 'must hold a whole JSON array (it ends early)');
}

/**
 * The one rule for text that crosses a public boundary, pure. PostgreSQL cannot store U+0000 (text
 * and jsonb refuse it), and a lone UTF-16 surrogate cannot be encoded as UTF-8: the driver would
 * silently turn it into U+FFFD (two different conversation ids would become one) or jsonb would
 * refuse the whole write. Refusing both up front keeps stored text equal to the text given.
 */

/** With the `u` flag a valid surrogate pair is one code point, so only unpaired halves match. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Why `text` cannot be stored as it is, or undefined when it can. */
export function textProblem(text: string): string | undefined {
  const nul = text.indexOf('\u0000');
  if (nul !== -1) return `must not contain U+0000 (found at index ${nul}; PostgreSQL cannot store it)`;
  const lone = text.search(LONE_SURROGATE);
  if (lone !== -1) {
    const unit = text.charCodeAt(lone).toString(16).toUpperCase();
    return `must be well-formed Unicode (lone surrogate U+${unit} at index ${lone})`;
  }
  return undefined;
}

/** UTF-8 size of `text` in bytes, what PostgreSQL stores. */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/**
 * `text.slice(start, end)` (non-negative positions) that never cuts a surrogate pair in two: a cut inside one moves
 * to before it at the end, past it at the start. Every cut of text to a length goes through it: half a pair is a lone
 * surrogate, which UTF-8 cannot hold, so a stored copy would read back as U+FFFD and never equal the text written.
 */
export function sliceWhole(text: string, start: number, end = text.length): string {
  const inPair = (at: number) => at > 0 && at < text.length && isHighSurrogate(text.charCodeAt(at - 1)) && isLowSurrogate(text.charCodeAt(at));
  const from = inPair(start) ? start + 1 : start;
  const to = inPair(end) ? end - 1 : end;
  return text.slice(from, Math.max(from, to));
}

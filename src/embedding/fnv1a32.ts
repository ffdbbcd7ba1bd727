/** The hash every feature of the hashing embedder goes through, and its prime for callers that inline it. */

const FNV_OFFSET = 0x811c9dc5;
export const FNV_PRIME = 0x01000193;

/**
 * FNV-1a, 32 bits, over the UTF-8 bytes: stable across platforms and runs. The bytes are produced here, as
 * TextEncoder would (a lone surrogate as U+FFFD), without allocating: this runs once per feature of every text.
 * `from` continues a hash: from the hash of a prefix, this gives the hash of prefix + text without joining them.
 */
export function fnv1a32(text: string, from = FNV_OFFSET): number {
  let hash = from;
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i);
    if (code < 0x80) {
      hash = Math.imul(hash ^ code, FNV_PRIME);
      continue;
    }
    if (code >= 0xd800 && code <= 0xdfff) {
      const low = code <= 0xdbff ? text.charCodeAt(i + 1) : Number.NaN;
      if (low >= 0xdc00 && low <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        i++;
      } else {
        code = 0xfffd;
      }
    }
    if (code < 0x800) {
      hash = Math.imul(hash ^ (0xc0 | (code >> 6)), FNV_PRIME);
    } else if (code < 0x10000) {
      hash = Math.imul(hash ^ (0xe0 | (code >> 12)), FNV_PRIME);
      hash = Math.imul(hash ^ (0x80 | ((code >> 6) & 0x3f)), FNV_PRIME);
    } else {
      hash = Math.imul(hash ^ (0xf0 | (code >> 18)), FNV_PRIME);
      hash = Math.imul(hash ^ (0x80 | ((code >> 12) & 0x3f)), FNV_PRIME);
      hash = Math.imul(hash ^ (0x80 | ((code >> 6) & 0x3f)), FNV_PRIME);
    }
    hash = Math.imul(hash ^ (0x80 | (code & 0x3f)), FNV_PRIME);
  }
  return hash >>> 0;
}

/**
 * Sentence and clause splitting for chat text: splits after `.`, `!`, `?` (and line breaks) when a new
 * sentence plausibly starts, and never inside numbers (`3.5`), paths (`src/a.ts`), URLs or common
 * abbreviations (`Dr.`, `e.g.`). Long sentences are cut further into clauses at `;` and `, but`.
 */

const ABBREVIATIONS = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'sr',
  'jr',
  'st',
  'vs',
  'etc',
  'e.g',
  'i.e',
  'approx',
  'inc',
  'ltd',
  'co',
  'jan',
  'feb',
  'mar',
  'apr',
  'jun',
  'jul',
  'aug',
  'sep',
  'sept',
  'oct',
  'nov',
  'dec',
  'mt',
  'ft',
  'ave',
]);

/** Sentences longer than this many words are split into clauses. */
const CLAUSE_SPLIT_WORDS = 12;

function endsWithAbbreviation(piece: string): boolean {
  if (/^\s*\d{1,2}\.$/.test(piece)) return true; // a list marker ("1. Economy"), not a sentence
  const match = /(\S+)\.$/.exec(piece);
  if (!match) return false;
  const word = match[1]!.toLowerCase().replace(/^[("'[]+/, '');
  return ABBREVIATIONS.has(word) || /^[A-HJ-Z]$/.test(match[1]!);
}

/** Split text into trimmed, non-empty sentences, in order; long prose sentences also into clauses (`clauses`, default true). */
export function splitSentences(text: string, clauses = true): string[] {
  const out: string[] = [];
  for (const block of text.split(/\n+/)) {
    const trimmed = block.trim();
    if (trimmed === '') continue;
    // Candidate boundaries: terminal punctuation (with closing quotes/brackets), whitespace, then a likely sentence start.
    const pieces = trimmed.split(/(?<=[.!?]["')\]]?)\s+(?=["'([]?[A-Z0-9])/);
    let pending = '';
    for (const piece of pieces) {
      pending = pending ? `${pending} ${piece}` : piece;
      if (!endsWithAbbreviation(pending)) {
        out.push(pending);
        pending = '';
      }
    }
    if (pending) out.push(pending);
  }
  return clauses ? out.flatMap(splitClauses) : out;
}

/** Cut an overlong sentence at `;`, ` - ` and `, but` / `, and` so each part can be kept on its own. */
export function splitClauses(sentence: string): string[] {
  if (sentence.split(/\s+/).length <= CLAUSE_SPLIT_WORDS) return [sentence];
  const parts = sentence
    .split(/;\s+|\s+[-\u2013\u2014]\s+|,\s+(?=(?:but|and|so|because|while|although)\s)/i)
    .map((p) => p.trim())
    .filter((p) => p !== '');
  return parts.length > 0 ? parts : [sentence];
}

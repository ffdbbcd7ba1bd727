/**
 * The words a search counts, pure. Lower case, accents folded, split at anything that is not a letter or
 * digit; English function words and question words dropped (a question's "when did ... do" says nothing
 * about which message answers it); a light suffix stripper so "painting", "painted" and "paints" meet.
 */

/**
 * Function words, auxiliaries, pronouns and question words. Names and numbers are never here: they are
 * what finds a message.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing done down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other ' +
    'our ours ourselves out over own same she should so some such than that the their theirs them themselves then there these ' +
    'they this those through to too under until up very was we were what when where which while who whom whose why will with ' +
    'would you your yours yourself yourselves s t d ll m re ve also get got go going like lot really thing things ' +
    'kind kinds type types way ways'
  ).split(' '),
);

/** "painting"/"painted"/"paints"/"paintings" → "paint"; "stories" → "story". Deliberately light: only common English inflections. */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  let w = word;
  if (w.endsWith('ies') && w.length > 4) return `${w.slice(0, -3)}y`;
  if (/(ss|x|ch|sh)es$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length > 5) return undouble(w.slice(0, -3));
  if (w.endsWith('ed') && w.length > 4) return undouble(w.slice(0, -2));
  return w;
}

/** "running" → "runn" → "run"; "shopped" → "shopp" → "shop". */
function undouble(word: string): string {
  return /([b-df-hj-np-tv-z])\1$/.test(word) && !/(ll|ss|zz)$/.test(word) ? word.slice(0, -1) : word;
}

/** Every word of `text`, normalized, in order; stop words dropped unless `keepStopWords`. */
export function searchTerms(text: string, options: { keepStopWords?: boolean; stem?: boolean } = {}): string[] {
  const words = text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/['’]s\b/g, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '' && (options.keepStopWords === true || !STOP_WORDS.has(w)));
  return options.stem === false ? words : words.map(stem);
}

/**
 * A text's sentences, pure: `Intl.Segmenter` (granularity 'sentence'), Unicode's sentence boundary rules (UAX #29)
 * through the ICU built into Node, so no splitter of our own and no dependency. A line break ends a sentence, so
 * list items are sentences too. Each segment keeps its trailing whitespace: joined, adjacent sentences are the text.
 */

// Made by the first call: building it loads ICU's break rules, a cost importing memfold should not pay.
let segmenter: Intl.Segmenter | undefined;

/** The sentences of `text`, each with its trailing whitespace; blank segments dropped. */
export function sentencesOf(text: string): string[] {
  segmenter ??= new Intl.Segmenter('en', { granularity: 'sentence' });
  return Array.from(segmenter.segment(text), (s) => s.segment).filter((s) => s.trim() !== '');
}

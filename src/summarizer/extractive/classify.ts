/**
 * Which section a sentence belongs to, and the words that make it worth keeping (with their weights).
 */
import { rarityWeight } from './common-words.js';

export type SectionKey = 'asked' | 'facts' | 'tools' | 'errors' | 'decisions' | 'open';

/** Section order and headings of the summary. */
export const SECTIONS: ReadonlyArray<{ key: SectionKey; heading: string }> = [
  { key: 'asked', heading: 'User asked:' },
  { key: 'facts', heading: 'Facts:' },
  { key: 'tools', heading: 'Files and tools:' },
  { key: 'errors', heading: 'Errors:' },
  { key: 'decisions', heading: 'Decisions:' },
  { key: 'open', heading: 'Open items:' },
];

/** How much a section's sentences are favoured in selection (facts = 1). */
export const SECTION_BONUS: Readonly<Record<SectionKey, number>> = {
  errors: 2,
  asked: 1.5,
  tools: 1.3,
  open: 1.3,
  decisions: 1.2,
  facts: 1,
};

const ERROR = /(?:error|exception)s?\b|\b(?:failed|failure|fails|traceback|crash(?:ed|es)?|panic|fatal|segfault|ENOENT|EACCES|ECONNREFUSED|timed out)\b/i;
const FILE =
  /(?:^|[\s("'`])(?:~|\.{1,2})?\/?(?:[\w.-]+\/)+[\w.-]+\.[A-Za-z][\w]{0,5}\b|\b[\w-]+\.(?:ts|tsx|js|jsx|mjs|cjs|py|rb|go|rs|java|kt|c|cc|cpp|h|hpp|cs|php|json|ya?ml|toml|md|txt|csv|sql|sh|bash|html|css|scss|lock|env|cfg|ini|log|xml|ipynb)\b/;
const COMMAND =
  /`[^`\n]+`|(?:^|\$\s)(?:npm|npx|pnpm|yarn|git|pip|python3?|node|docker|kubectl|make|cargo|go|curl|wget|ls|cd|cat|grep|sed|rm|mkdir|mv|cp|chmod|psql|tsc|vitest|pytest)\s/;
// A choice or a commitment, not any future tense: a bare "will" or "I agree" in chat is not a decision.
const DECISION =
  /\b(?:decided|decide to|decision|agreed (?:to|on|that)|we will|we'll|let's|let us|plan to|planning to|settled on|chose|opted|signed up|committed to)\b/i;
const OPEN =
  /\b(?:todo|to-do|to do list|pending|not yet|still need|still needs|still have to|follow up|follow-up|tbd|open question|unresolved|remains to|waiting for|waiting on)\b/i;
const REQUEST =
  /\?\s*$|\b(?:can you|could you|would you|will you|please|i need|i want|i'd like|i would like|i'm looking|i am looking|want to|need to|help me|tell me|show me|let me know|find me|book me)\b/i;

export function isError(text: string): boolean {
  return ERROR.test(text);
}

export function mentionsFileOrCommand(text: string): boolean {
  return FILE.test(text) || COMMAND.test(text);
}

/** The section of a sentence. `fromUser`: said by the user; `unanswered`: a question nobody answered after. */
export function classifySentence(text: string, fromUser: boolean, unanswered: boolean): SectionKey {
  if (isError(text)) return 'errors';
  if (mentionsFileOrCommand(text)) return 'tools';
  if (OPEN.test(text) || (unanswered && /\?\s*$/.test(text))) return 'open';
  if (fromUser && REQUEST.test(text)) return 'asked';
  if (DECISION.test(text)) return 'decisions';
  return 'facts';
}

const MONTHS = new Set([
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
  'sunday',
]);

const TOKEN = /[A-Za-z][A-Za-z'_-]*[A-Za-z0-9_]|[A-Za-z]|\$?\d[\w.,:/-]*/g;

/** Lowercase and strip possessives and plural `s` so "Caroline's" and "Caroline", "paintings" and "painting" meet. */
export function normalizeWord(token: string): string {
  let w = token.toLowerCase().replace(/[.,:/-]+$/, '');
  w = w.replace(/'s$|'$/, '');
  if (w.length > 4 && /[^s]s$/.test(w) && !/\d/.test(w)) w = w.slice(0, -1);
  return w;
}

/**
 * Weighted content words of a sentence: numbers, dates, amounts and ids 2; names (capitalized words
 * after the first) and month/day names 1.6; other words by rarity (0 for stopwords, 1 when not common).
 */
export function weightedWords(text: string): Map<string, number> {
  const words = new Map<string, number>();
  let first = true;
  for (const match of text.matchAll(TOKEN)) {
    const token = match[0];
    const word = normalizeWord(token);
    if (word === '') continue;
    let weight: number;
    if (/\d/.test(token)) weight = 2;
    else if (MONTHS.has(word)) weight = 1.6;
    else if (!first && /^[A-Z]/.test(token) && word !== 'i' && !/^i'/.test(word)) weight = Math.max(1.6, rarityWeight(word) * 1.6);
    else weight = rarityWeight(word);
    first = false;
    if (weight > (words.get(word) ?? 0)) words.set(word, weight);
  }
  return words;
}

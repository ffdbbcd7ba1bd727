/**
 * What a question asks for, pure and deterministic: read from its wording alone, so the same question always
 * shapes the answer the same way. The kinds are not exclusive ("how many ... do I have now" is both a count and
 * the latest value).
 */

export interface QuestionIntent {
  /** A count or total over the whole conversation ("how many", "in total", "all the"): every mention matters, across sessions. */
  aggregate: boolean;
  /** The value as it stands now ("current", "still", "latest"): a later message may update an earlier one. */
  latest: boolean;
  /** A suggestion fitted to the user ("recommend", "any tips", "what should I"): their own likes, habits and plans matter. */
  preference: boolean;
  /** Asked in the first person ("my", "I"): about what the user said of themselves. */
  self: boolean;
}

const AGGREGATE = /\b(how many|how much|in total|total|altogether|combined|all (?:the|of)|number of|how often|times|each|every|list)\b/i;
const LATEST = /\b(current(?:ly)?|now|latest|most recent(?:ly)?|still|these days|at the moment|any ?more|so far|recently)\b/i;
const PREFERENCE =
  /\b(suggest(?:ion)?s?|recommend(?:ation)?s?|any tips|tips|advice|ideas?|what should i|should i|can you (?:help|find|give|think)|could you (?:help|find|give)|what (?:would|do) you think|inspiration)\b/i;

const SELF = /\b(?:i|my|me|mine|myself)\b/i;

/** "How many days ago", "how many weeks between": a span of time, not a count over the conversation. */
const TIME_SPAN = /\bhow (?:many|much) (?:(?:more|fewer|less) )?(?:time|days?|weeks?|months?|years?|hours?|minutes?)\b/gi;

export function questionIntent(question: string): QuestionIntent {
  return {
    aggregate: AGGREGATE.test(question.replace(TIME_SPAN, '')),
    latest: LATEST.test(question),
    preference: PREFERENCE.test(question),
    self: SELF.test(question),
  };
}

/**
 * A user's statement of a like, habit or plan, in the first person ("I prefer ...", "I usually ...", "my favorite
 * ..."): what a recommendation should follow, though it rarely shares the question's words.
 */
const FIRST_PERSON = new RegExp(
  [
    // "I prefer", "I really love", "I usually", "I've been", "I'm planning", "I'm really into"
    "\\bi(?:['’]m| am|['’]ve| have)?(?: really| usually| always| often| generally| also| definitely| mostly| especially| been)? " +
      '(?:prefer|love|like|enjoy|adore|hate|dislike|avoid|want|need|plan|tend|usually|always|often|into|planning|trying|thinking|looking|hoping|learning|getting into)\\b',
    '\\bmy (?:favou?rites?|go-to|preferred|usual)\\b',
    "\\bi(?:['’]m| am) (?:a (?:big |huge )?fan|interested|allergic|vegetarian|vegan)\\b",
  ].join('|'),
  'i',
);

export function statesPreference(text: string): boolean {
  return FIRST_PERSON.test(text);
}

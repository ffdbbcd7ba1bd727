/**
 * Sentence condensing: drop what carries no fact (openers and interjections, "I think", "you know", intensifiers,
 * vocatives, tag questions) and keep the sentence itself readable: its pronouns, articles and verbs stay. Only
 * whole words from fixed lists are removed, so names, numbers, paths and code survive untouched.
 */

/** Openers dropped at the start of a sentence, once each, when a comma or `!`/`.` follows (`Wow, ...`, `Yeah! ...`). */
const OPENER =
  /^(?:oh+|wow+|whoa|hey+|hi|hello|yeah|yes|yep|yup|yay|no|nope|nah|um+|uh+|hmm+|ha(?:ha)+|lol|omg|aw+|ooh+|ah+|well|ok(?:ay)?|sure|anyway|anyways|man|gosh|geez|great|cool|awesome|nice|sweet|thanks|thank you|totally|absolutely|exactly|true|right|indeed|congrats|congratulations|alright|of course|honestly|seriously|actually|anyhow|btw|by the way|so|and|but|also|now|like)\s*[,!.:;\u2014-]+\s*/i;
/** A greeting or thanks with a name: `Hey Mel!`, `Thanks Caroline,` (case-sensitive: the name is capitalized). */
const GREETING = /^(?:[Hh]ey+|[Hh]i|[Hh]ello|[Tt]hanks|[Tt]hank you|[Cc]ongrats|[Cc]ongratulations|[Ww]ow)\s+[A-Z][a-z]+\s*[,!.]+\s*/;
/** Words that open a sentence without punctuation and add nothing (`So I went`, `Oh I see`). */
const BARE_OPENER = /^(?:so(?!\s+(?:far|much|many|long)\b)|well|oh|and|but|also|anyway|um|uh|like)\s+(?=\S)/i;
/**
 * Hedges and fillers anywhere in a sentence. Only where they cannot be the sentence's own verb: "I think" but not
 * "I think about her", "you know" only between commas ("Do you know Ana?" stays).
 */
const FILLER =
  /(?:,\s*)?(?:\bi (?:think|guess)\b(?!\s+(?:about|of|so\b))|\bi mean,|,\s*you know\b(?=\s*[,.!?]|$)|\byou know,|\b(?:to be honest|tbh|at the end of the day|to be fair|if you ask me)\b)(?:,\s*|\s+|(?=[.!?])|$)/gi;
/** Intensifiers and discourse adverbs before a lowercase word (grammatical without them; "Super Bowl", "not just", "so far" stay). */
const INTENSIFIER =
  /(?<!\bnot\s)\b(?:really|just|very|actually|basically|literally|totally|definitely|honestly|seriously|absolutely|truly|super|so(?!\s+(?:far|that|many|much|long)\b))\s+(?=\S)/gi;
/** Tag questions and trailing thanks or reactions. */
const TAG = /,?\s*(?:you know|right|huh|haha+|lol|isn't it|don't you think|(?:thanks|thank you)(?:\s+(?:a lot|so much|again|really))*)\s*(?=[?!.]*$)/i;

function capitalize(text: string): string {
  return text.replace(/^([("'\s]*)([a-z])/, (_m, lead: string, c: string) => lead + c.toUpperCase());
}

/**
 * The sentence without filler. `names` are the participants: said as a vocative (`Thanks, Mel!`, `Hey Caroline,`)
 * they are dropped, since every line already names its speaker.
 */
export function condense(sentence: string, names: ReadonlySet<string> = new Set()): string {
  let text = sentence
    .replace(/\*\*|__|^#+\s+/g, '') // markdown emphasis and headings
    .replace(/^\s*(?:[-*•]|\d{1,2}\.)\s+/, '') // list markers
    .replace(/\s+/g, ' ')
    .trim();
  for (let i = 0; i < 4; i++) {
    const before = text;
    text = text.replace(GREETING, '').replace(OPENER, '').replace(BARE_OPENER, '');
    const vocative = /^([A-Z][a-z]+)\s*[,!]\s*/.exec(text);
    if (vocative && names.has(vocative[1]!.toLowerCase())) text = text.slice(vocative[0].length);
    if (text === before) break;
  }
  text = text
    .replace(FILLER, (m) => (m.startsWith(',') ? ', ' : ''))
    .replace(INTENSIFIER, (m, offset: number, all: string) => (/[a-z]/.test(all[offset + m.length] ?? '') ? '' : m));
  text = text.replace(TAG, '');
  // A vocative at the end: "That's great, Mel!" -> "That's great!"
  text = text.replace(/,\s*([A-Z][a-z]+)\s*([!?.]*)$/, (m, name: string, end: string) => (names.has(name.toLowerCase()) ? end : m));
  text = text
    .replace(/\s+([,.;:!?])(?=\s|$)/g, '$1')
    .replace(/([,;:])\s*([,;:.!?])/g, '$2')
    .replace(/([!?.])\1+/g, '$1')
    .replace(/^[,;:\s-]+/, '')
    .trim();
  return capitalize(text);
}

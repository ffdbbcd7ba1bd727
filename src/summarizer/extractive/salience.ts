/**
 * How likely a sentence is to state a fact someone will ask about later, from its form alone. Measured on LoCoMo
 * (test/bench/extractive-quality.ts): a message that answers another speaker's question is an evidence turn twice
 * as often as others (.47 against .15); a speaker's own news ("I", "my", "we") is asked about more than what they
 * say about others; questions rarely hold the answer themselves. (Lowering what is said to "you" gained little in chat
 * and would cost an assistant's "your reservation HATHAT is booked": left neutral.)
 */
import type { Unit } from './units.js';

/** A question: its answer, in the next message, says more. */
const QUESTION = 0.3;
/** Said in reply to someone else's question. */
const REPLY = 1.5;
/** About the speaker (first person). */
const SELF = 1.3;

const FIRST_PERSON = /\b(?:I|I'm|I've|I'd|I'll|my|me|mine|we|we're|we've|our|us)\b/i;

/** A factor on a unit's gain in selection (1 = neutral). Tool calls, results and errors are left at 1. */
export function salience(unit: Unit): number {
  if (unit.section === 'tools' || unit.section === 'errors') return 1;
  if (/\?["')\]]?$/.test(unit.text)) return QUESTION;
  return (unit.reply ? REPLY : 1) * (FIRST_PERSON.test(unit.text) ? SELF : 1);
}

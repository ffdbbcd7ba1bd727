/**
 * How memory_read answers a query: the choices measured on LoCoMo (docs/memory-read.md, "memory_read
 * ablation") with the winning values as defaults. The eval passes other values to compare them; an
 * application has no reason to.
 */

export interface ReadStrategy {
  /** Transcript segments the archive's search returns as candidates; their messages are then ranked one by one. */
  candidateSegments: number;
  /** Candidate segments for a question asking a count or total (`questionIntent`): its mentions are spread over many. */
  aggregateCandidates: number;
  /** Messages shown on each side of a matching message. */
  radius: number;
  /**
   * Weight of a candidate segment's own rank in the archive search (1 for the first, falling as 1/rank) added to
   * each of its messages' BM25 score (normalized to the best message's). 0 ranks messages by their own words only.
   */
  segmentWeight: number;
  /** Question words and function words are dropped before the archive search (it keeps them otherwise). */
  cleanQuery: boolean;
  /**
   * Summary hits: `pointer` lists each as one line (label and time span) after the transcript windows; `excerpt`
   * shows their text in the budget the windows left; `first` shows their text before the windows (the earlier
   * order); `none` leaves them out unless no transcript matches (or `kind: "summary"` asks for them). `none` won on
   * LoCoMo: even one line per summary takes room that evidence would fill.
   */
  summaries: 'pointer' | 'excerpt' | 'first' | 'none';
  /**
   * Added to the score of a matching message written within a date the query names ("in May 2023", "on 3 June,
   * 2023"; see archive/ranking/query-dates.ts); such a query also draws candidates from segments of that time. 0 turns it off.
   */
  dateBoost: number;
  /**
   * Block headers give the time span as a reader says it ("Mon 8 May 2023 13:56 .. 14:10 UTC") beside the ISO
   * times of the lines: questions about time are asked and answered in words, and relative dates ("yesterday")
   * resolve against the day.
   */
  spokenDates: boolean;
  /**
   * Passage headers leave out the message count (the lines show it) and give one time when a passage's lines share
   * it (`Wed 23 August 2023 15:31 UTC`); a passage's first line leaves its time to the header, which starts with it.
   * The budget then holds more evidence.
   */
  shortHeaders: boolean;
  /**
   * `compact`: a message line is `[time] speaker: text`, the time given only when it differs from the line
   * above (the passage header has the day in words), so more messages fit the budget; tool calls and results
   * keep the transcript form. `transcript`: every line as archived, `[ISO time] role(name): text`.
   */
  lineStyle: 'compact' | 'transcript';
  /**
   * Compact lines only: after a message's text, the relative dates it says read against when it was said
   * (` [dates: yesterday = 7 May 2023]`, `conversation/relative-dates.ts`): `anchored` says a past week or weekday
   * from that day ("the week before 16 June 2023"), `calendar` names the calendar week; `none` adds nothing.
   */
  dateNotes: 'none' | 'calendar' | 'anchored';
  /**
   * A message whose line takes more tokens than this is scored and shown by its sentences (each with its
   * neighbours, `…` where the excerpt cuts), so one long message never takes the budget whole; its segment's label
   * reads it in full. 0 shows every message whole.
   */
  longMessageTokens: number;
  /**
   * For a question asking the value as it stands now ("current", "still"; `questionIntent`), added to a matching
   * message's score in proportion to its place among the candidates (0 for the oldest, this for the newest). 0 turns it off.
   */
  recencyBoost: number;
  /**
   * For a question asking a count or total ("how many", "in total"): a matching item's score is divided by 1 +
   * this × the better items its session already has, so the answer reaches across sessions. 0 turns it off.
   */
  sessionSpread: number;
  /**
   * For a question asking a recommendation ("suggest", "any tips"): added to the score of the user's own statements
   * of likes, habits and plans in the candidate segments ("I prefer ...", "my favorite ..."), even when they share no
   * word with the question. 0 turns it off.
   */
  preferenceBoost: number;
  /** For a question in the first person ("my", "I"), added to the score of the user's own matching messages: what they said of themselves. 0 turns it off. */
  selfBoost: number;
  /** The first-person boost also takes a user message naming a kind of the category the question names (`kindsOf`). */
  selfKinds: boolean;
  /**
   * With the time a question is asked (`execute(args, { at })`), the relative times it names ("yesterday", "last
   * Saturday", "two weeks ago") are dates too, resolved by chrono-node against that time (`relativeTimeHints`).
   */
  relativeDates: boolean;
  /**
   * With the live history given (`memfold.memoryRead` gives it), its messages are ranked beside the archive's, each
   * score times this: matches still in the context come after archived ones of the same strength. 0 leaves it out.
   */
  liveWeight: number;
  /**
   * Which questions also search the kinds of the category they name (`kindsOf`, WordNet's hyponyms): "how many
   * musical instruments" then finds "guitar" and "drum set". `count`: questions asking a count or total; `category`:
   * any question naming a category ("which cities", "what kinds of sports"); `all`: every noun of every question.
   */
  kindsOf: 'none' | 'count' | 'category' | 'all';
  /** A kind's weight in the ranking beside the question's own words (1). */
  kindsWeight: number;
  /** Levels of kinds below the category, and most words per category. */
  kindsDepth: number;
  kindsLimit: number;
  /** Candidate segments drawn by a search for the kinds alone (beside the question's own); 0 draws none. */
  kindsCandidates: number;
  /**
   * With a semantic embedder given to the tool (`MemoryReadOptions.embedder`), added to each candidate message's score
   * times its closeness to the question by meaning (`memory-read-semantic.ts`: 1 for the closest, 0 at or below the
   * mean), so a message that shares no word with the question can still be shown. 0 turns it off; without an
   * embedder it does nothing.
   */
  semanticWeight: number;
  /** `windows`: the matching messages with their neighbours; `segment-head`: each hit segment from its start (the earlier display). */
  display: 'windows' | 'segment-head';
}

export const DEFAULT_READ_STRATEGY: Readonly<ReadStrategy> = Object.freeze({
  candidateSegments: 20,
  aggregateCandidates: 40,
  radius: 1,
  segmentWeight: 0.5,
  cleanQuery: true,
  summaries: 'none',
  spokenDates: true,
  shortHeaders: true,
  lineStyle: 'compact',
  dateNotes: 'anchored',
  dateBoost: 0.5,
  display: 'windows',
  longMessageTokens: 150,
  recencyBoost: 0,
  sessionSpread: 0,
  preferenceBoost: 0,
  selfBoost: 0.3,
  selfKinds: true,
  relativeDates: false,
  liveWeight: 0.5,
  kindsOf: 'category',
  kindsWeight: 0.3,
  kindsDepth: 3,
  kindsLimit: 200,
  kindsCandidates: 10,
  semanticWeight: 0.25,
});

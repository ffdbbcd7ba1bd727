/**
 * The shapes evaluation works on, whatever the dataset. Evidence turn ids live here, beside the
 * messages: they are never put in a message's content or any field memfold stores.
 */
import type { NewMessage } from '../conversation/types.js';

export interface EvalQuestion {
  /** Stable id within its conversation (LoCoMo: the question's index). */
  id: string;
  question: string;
  /** Absent for adversarial questions and when the dataset gives none. */
  answer?: string;
  /** Turn ids that hold the answer; every one names a turn of the conversation. */
  evidence: string[];
  category: string;
  /** Adversarial questions (LongMemEval: abstention ones) have no answer to keep: answer-token retention skips them. */
  adversarial: boolean;
  /** When the question is asked (ISO), when the dataset says (LongMemEval's `question_date`). */
  askedAt?: string;
  /**
   * For LongMemEval's retrieval metrics (scoring only): the correct sessions (keys of `sessionKeys`) and turns
   * (turn ids), as LongMemEval's retrieval code counts them.
   */
  retrievalTargets?: { sessions: string[]; turns: string[] };
}

export interface EvalConversation {
  id: string;
  /** What memfold replays, in order. */
  messages: NewMessage[];
  /** The dataset's turn id of each message, same order. */
  turnIds: string[];
  /**
   * Each message as the dataset prints it (`speaker: text`, no photo captions or metadata), the unit
   * the baselines count (see `referenceTokens`).
   */
  referenceLines: string[];
  /** The dataset's session of each message, same order (scoring only; LongMemEval's retrieval metrics). */
  sessionKeys?: string[];
  questions: EvalQuestion[];
}

/** A tool-using run and the tool calls its task really needs. */
export interface AgenticRun {
  id: string;
  messages: NewMessage[];
  /** The task's ground-truth tool calls. */
  actions: Array<{ name: string; kwargs: Record<string, unknown> }>;
}

/** What a loader left out, so that reports can say it. */
export interface SkippedQuestions {
  /** Evidence entries that name no turn of their conversation (dropped from their question). */
  malformedEvidence: number;
  /** Questions the dataset gives no evidence for. */
  withoutEvidence: number;
  /** Questions whose every evidence entry was malformed. */
  onlyMalformedEvidence: number;
}

export interface QaDataset {
  name: string;
  conversations: EvalConversation[];
  skipped: SkippedQuestions;
}

/** Keeps the questions whose evidence names turns of the conversation, and counts the rest. */
export function checkEvidence(
  turnIds: readonly string[],
  questions: ReadonlyArray<Omit<EvalQuestion, 'evidence'> & { evidence: readonly string[] }>,
  skipped: SkippedQuestions,
): EvalQuestion[] {
  const known = new Set(turnIds);
  const kept: EvalQuestion[] = [];
  for (const q of questions) {
    if (q.evidence.length === 0) {
      skipped.withoutEvidence++;
      continue;
    }
    const evidence = q.evidence.filter((id) => known.has(id));
    skipped.malformedEvidence += q.evidence.length - evidence.length;
    if (evidence.length === 0) {
      skipped.onlyMalformedEvidence++;
      continue;
    }
    kept.push({ ...q, evidence });
  }
  return kept;
}

export function noneSkipped(): SkippedQuestions {
  return { malformedEvidence: 0, withoutEvidence: 0, onlyMalformedEvidence: 0 };
}

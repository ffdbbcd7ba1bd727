/**
 * LoCoMo as an evaluation dataset: its conversations with their questions, evidence checked against
 * the turns (a few entries are malformed, a few questions have none: they are counted, not guessed).
 */
import { checkEvidence, noneSkipped, type EvalConversation, type QaDataset } from '../eval-types.js';
import { loadLocomo, type LocomoConversation } from './locomo.js';

export const LOCOMO_CATEGORIES: Readonly<Record<number, string>> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
  5: 'adversarial',
};

export function locomoDataset(conversations: readonly LocomoConversation[]): QaDataset {
  const skipped = noneSkipped();
  const evalConversations: EvalConversation[] = conversations.map((c) => ({
    id: c.id,
    messages: c.messages,
    turnIds: c.turnIds,
    referenceLines: c.turnLines,
    questions: checkEvidence(
      c.turnIds,
      c.questions.map((q, i) => ({
        id: String(i),
        question: q.question,
        ...(q.answer !== undefined && q.answer !== '' ? { answer: String(q.answer) } : {}),
        evidence: q.evidence ?? [],
        category: LOCOMO_CATEGORIES[q.category] ?? `category ${q.category}`,
        adversarial: q.category === 5,
      })),
      skipped,
    ),
  }));
  return { name: 'locomo', conversations: evalConversations, skipped };
}

export async function loadLocomoDataset(file: string): Promise<QaDataset> {
  return locomoDataset(await loadLocomo(file));
}

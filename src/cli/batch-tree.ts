/**
 * The batch tree of a conversation, pure: frontier batches at the roots, each with the batches it
 * covers below it, in time order, and the sessions each covers.
 */
import type { ArchiveEntry } from '../conversation/types.js';
import { byTime, displayLabel } from '../compaction/view/clip-archive.js';

/** What the tree shows of a batch: everything but its text. */
export type TreeBatch = Omit<ArchiveEntry, 'content'>;

export interface BatchNode<B extends TreeBatch = TreeBatch> {
  batch: B;
  children: BatchNode<B>[];
}

export function buildBatchTree<B extends TreeBatch>(batches: readonly B[]): BatchNode<B>[] {
  const nodes = new Map(batches.map((b) => [b.label, { batch: b, children: [] as BatchNode<B>[] }]));
  const roots: BatchNode<B>[] = [];
  for (const node of [...nodes.values()].sort((a, b) => byTime(a.batch, b.batch))) {
    const parent = node.batch.parentLabel ? nodes.get(node.batch.parentLabel) : undefined;
    if (parent) parent.children.push(node);
    else roots.push(node);
  }
  return roots;
}

/** An ISO time to the minute. */
export function shortTime(iso: string): string {
  return iso.replace(/:\d{2}\.\d{3}Z$/, 'Z');
}

/** Session ids as one line: all of up to three, else the first and last and how many (ids shown as labels are). */
export function formatSessions(sessions: readonly string[] | undefined): string {
  if (sessions === undefined || sessions.length === 0) return '';
  const shown = sessions.map(displayLabel);
  if (shown.length <= 3) return `  ${shown.length === 1 ? 'session' : 'sessions'} ${shown.join(', ')}`;
  return `  sessions ${shown[0]} .. ${shown[shown.length - 1]} (${shown.length})`;
}

export function formatBatchTree(roots: readonly BatchNode[]): string {
  const lines: string[] = [];
  const walk = (node: BatchNode, indent: string) => {
    const b = node.batch;
    const unit = b.depth === 0 ? 'messages' : 'batches';
    // A label holds the conversation id: shown as the clip-archive shows it, so it stays on its line.
    lines.push(
      `${indent}depth ${b.depth}  ${shortTime(b.start)} .. ${shortTime(b.end)}  ${b.count} ${unit}  ${displayLabel(b.label)}${formatSessions(b.sessions)}`,
    );
    node.children.forEach((child) => walk(child, `${indent}  `));
  };
  roots.forEach((root) => walk(root, ''));
  return lines.join('\n');
}

/** How many batches each depth holds, deepest first. */
export function depthCounts(batches: readonly Pick<ArchiveEntry, 'depth'>[]): Array<{ depth: number; batches: number }> {
  const counts = new Map<number, number>();
  for (const b of batches) counts.set(b.depth, (counts.get(b.depth) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[0] - a[0]).map(([depth, n]) => ({ depth, batches: n }));
}

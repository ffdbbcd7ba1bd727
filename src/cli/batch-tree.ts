/**
 * The batch tree of a conversation, pure: frontier batches at the roots, each with the batches it
 * covers below it, in time order.
 */
import type { ArchiveEntry } from '../conversation/types.js';
import { byTime, displayLabel } from '../compaction/clip-archive.js';

export interface BatchNode {
  batch: ArchiveEntry;
  children: BatchNode[];
}

export function buildBatchTree(batches: readonly ArchiveEntry[]): BatchNode[] {
  const nodes = new Map(batches.map((b) => [b.label, { batch: b, children: [] as BatchNode[] }]));
  const roots: BatchNode[] = [];
  for (const node of [...nodes.values()].sort((a, b) => byTime(a.batch, b.batch))) {
    const parent = node.batch.parentLabel ? nodes.get(node.batch.parentLabel) : undefined;
    if (parent) parent.children.push(node);
    else roots.push(node);
  }
  return roots;
}

function short(iso: string): string {
  return iso.replace(/:\d{2}\.\d{3}Z$/, 'Z');
}

export function formatBatchTree(roots: readonly BatchNode[]): string {
  const lines: string[] = [];
  const walk = (node: BatchNode, indent: string) => {
    const b = node.batch;
    const unit = b.depth === 0 ? 'messages' : 'batches';
    // A label holds the conversation id: shown as the clip-archive shows it, so it stays on its line.
    lines.push(`${indent}depth ${b.depth}  ${short(b.start)} .. ${short(b.end)}  ${b.count} ${unit}  ${displayLabel(b.label)}`);
    node.children.forEach((child) => walk(child, `${indent}  `));
  };
  roots.forEach((root) => walk(root, ''));
  return lines.join('\n');
}

/** How many batches each depth holds, deepest first. */
export function depthCounts(batches: readonly ArchiveEntry[]): Array<{ depth: number; batches: number }> {
  const counts = new Map<number, number>();
  for (const b of batches) counts.set(b.depth, (counts.get(b.depth) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[0] - a[0]).map(([depth, n]) => ({ depth, batches: n }));
}

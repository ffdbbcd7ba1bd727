/**
 * The layout's rules, checked on the import graph of src/: compaction talks to its ports only (type
 * imports, never an adapter), and no module imports itself back through others (no cycles).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../src');
/** Folders of adapters: a backend's code, which only the composition root and the CLI may wire in. */
const ADAPTER_DIRS = [
  'archive/lancedb',
  'archive/in-memory',
  'persistence/kysely',
  'persistence/pglite',
  'persistence/postgres',
  'persistence/in-memory',
  'openai',
  'summarizer/extractive',
];

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => path.join(dir, file));
}

/** Relative imports and re-exports of every file (static and dynamic), resolved to src-relative paths. */
function importGraph(): Edge[] {
  const edges: Edge[] = [];
  const pattern = /(?:^|\n)\s*(import|export)\s+(type\s+)?[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(pattern)) {
      const specifier = match[3] ?? match[4]!;
      const target = path.resolve(path.dirname(file), specifier).replace(/\.js$/, '.ts');
      edges.push({ from: path.relative(SRC, file), to: path.relative(SRC, target), typeOnly: match[2] !== undefined });
    }
  }
  return edges;
}

/** Every cycle of value imports, as the list of files around it (type-only imports are erased at run time). */
function cycles(edges: readonly Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const edge of edges.filter((e) => !e.typeOnly)) next.set(edge.from, [...(next.get(edge.from) ?? []), edge.to]);
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const to of next.get(file) ?? []) {
      if (state.get(to) === 'open') found.push([...stack.slice(stack.indexOf(to)), to]);
      else if (!state.has(to)) visit(to);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of next.keys()) if (!state.has(file)) visit(file);
  return found;
}

describe('the import graph of src/', () => {
  const edges = importGraph();

  it('is read: every relative import points at a file that exists', () => {
    const files = new Set(sourceFiles(SRC).map((file) => path.relative(SRC, file)));
    expect(edges.length).toBeGreaterThan(200);
    expect(edges.filter((e) => !files.has(e.to)).map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  it('compaction/ imports no adapter, and its ports as types only', () => {
    const fromCompaction = edges.filter((e) => e.from.startsWith('compaction/'));
    expect(fromCompaction.length).toBeGreaterThan(20);
    const adapters = fromCompaction.filter((e) => ADAPTER_DIRS.some((dir) => e.to.startsWith(`${dir}/`)));
    expect(adapters.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
    const ports = fromCompaction.filter((e) => /^(archive|persistence|summarizer|embedding)\//.test(e.to) && !e.typeOnly);
    expect(ports.map((e) => `${e.from} -> ${e.to}`)).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(cycles(edges).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });
});

/**
 * The TypeScript blocks of README.md and docs/*.md, type-checked as a user would paste them: each block a module of
 * a scratch project where `memfold` is this checkout's built package (package.json `exports`, so `dist/`), checked
 * by the project's own compiler under strict settings. Diagnostics come back at the Markdown file and line.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;

export interface CodeBlock {
  /** The Markdown file, relative to the repository root. */
  file: string;
  /** The line of the block's first line of code, 1-based. */
  line: number;
  /** The heading the block is under (`Integrations`), '' before the first. */
  section: string;
  code: string;
  /** Marked ```ts fragment: not a module on its own, so not checked. */
  fragment: boolean;
}

/** Every ```ts / ```typescript block of one Markdown text. */
export function extractBlocks({ file, markdown }: { file: string; markdown: string }): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split('\n');
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const heading = /^#+\s+(.*)$/.exec(lines[i]!);
    if (heading !== null) section = heading[1]!.trim();
    const open = /^```(ts|typescript)(\s+\S.*)?$/.exec(lines[i]!.trim());
    if (open === null) {
      // Another language's block: skip to its end, so a ```ts inside it is not taken for an opening.
      if (lines[i]!.trim().startsWith('```')) i = lines.findIndex((l, j) => j > i && l.trim() === '```');
      if (i === -1) break;
      continue;
    }
    const end = lines.findIndex((l, j) => j > i && l.trim() === '```');
    if (end === -1) throw new Error(`${file}:${i + 1}: a code block that does not end`);
    const info = (open[2] ?? '').trim().split(/\s+/);
    blocks.push({ file, line: i + 2, section, code: lines.slice(i + 1, end).join('\n'), fragment: info.includes('fragment') });
    i = end;
  }
  return blocks;
}

/** README.md and every docs/*.md, in that order. */
export function documentationBlocks(): CodeBlock[] {
  const pages = readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...pages].flatMap((file) => extractBlocks({ file, markdown: readFileSync(path.join(ROOT, file), 'utf8') }));
}

/**
 * What the documentation takes as the application's own: the open memfold, the conversation, an openai client, an AI
 * SDK model, and the stand-ins the examples name for the application's code. Imports are not given: a block imports
 * what it uses, or it would not run when pasted.
 */
const APPLICATION = `
declare const memfold: import('memfold').Memfold;
declare const conversationId: string;
declare const messages: import('memfold').NewMessage[];
declare const openai: import('openai').default;
declare const model: import('ai').LanguageModel;
declare function callYourModel(
  messages: import('memfold').ConversationMessage[],
  tools: import('memfold').FunctionToolDefinition[],
): Promise<{ text: string; toolCalls?: import('memfold').ToolCall[]; usage: { prompt_tokens: number } }>;
declare function userIsMidPayment(conversationId: string): Promise<boolean>;
declare const useMyOwnSummary: boolean;
declare function mySummary(conversationId: string): Promise<string>;
declare const metrics: { record(status: string, tokensSaved: number): void };
declare function log(event: unknown): void;
`;

/** Strict, as this repository compiles itself: code that checks here checks under laxer settings too. */
const COMPILER_OPTIONS = {
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  moduleDetection: 'force',
  lib: ['ES2023'],
  types: ['node'],
  strict: true,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  skipLibCheck: true,
  noEmit: true,
};

/** A project in `dir` holding `blocks`, each as blocks/NNN.ts; returns the file each block was written to. */
function writeProject({ dir, blocks }: { dir: string; blocks: CodeBlock[] }): Map<string, CodeBlock> {
  const modules = path.join(dir, 'node_modules');
  mkdirSync(modules, { recursive: true });
  // `memfold` is this checkout, read through its package.json `exports` (dist/); the rest are the checkout's packages.
  symlinkSync(ROOT, path.join(modules, 'memfold'));
  for (const name of readdirSync(path.join(ROOT, 'node_modules'))) {
    if (name === 'memfold' || name.startsWith('.')) continue;
    symlinkSync(path.join(ROOT, 'node_modules', name), path.join(modules, name));
  }
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'docs-code', private: true, type: 'module' }));
  writeFileSync(path.join(dir, 'application.d.ts'), APPLICATION);
  mkdirSync(path.join(dir, 'blocks'));
  const files = new Map<string, CodeBlock>();
  blocks.forEach((block, index) => {
    const name = `blocks/${String(index).padStart(3, '0')}.ts`;
    writeFileSync(path.join(dir, name), `${block.code}\n`);
    files.set(name, block);
  });
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: COMPILER_OPTIONS, files: ['application.d.ts', ...files.keys()] }));
  return files;
}

const PROJECT: CodeBlock = { file: '(project)', line: 0, section: '', code: '', fragment: false };

export interface BlockDiagnostic {
  block: CodeBlock;
  /** `docs/library.md:72:5: error TS2339: ...`: the Markdown file, line and column. */
  message: string;
}

/** Type-checks `blocks` (fragments left out) in a new project under `dir`; one diagnostic per compiler error. */
export function checkBlocks({ dir, blocks }: { dir: string; blocks: CodeBlock[] }): BlockDiagnostic[] {
  const files = writeProject({ dir, blocks: blocks.filter((block) => !block.fragment) });
  let output = '';
  try {
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir, '--pretty', 'false'], {
      cwd: dir,
      encoding: 'utf8',
    });
  } catch (error) {
    output = String((error as { stdout?: string }).stdout ?? error);
  }
  const diagnostics: BlockDiagnostic[] = [];
  for (const line of output.split('\n')) {
    const match = /^(blocks\/\d+\.ts)\((\d+),(\d+)\): (.*)$/.exec(line);
    const block = match === null ? undefined : files.get(match[1]!);
    if (match === null || block === undefined) {
      const last = diagnostics.at(-1);
      if (line.startsWith(' ') && last !== undefined) last.message += `\n${line}`;
      // An error outside the blocks (the project, the package's types) fails the check too.
      else if (line.trim() !== '') diagnostics.push({ block: PROJECT, message: line });
      continue;
    }
    diagnostics.push({ block, message: `${block.file}:${block.line + Number(match[2]) - 1}:${match[3]}: ${match[4]}` });
  }
  return diagnostics;
}

/**
 * Code with its imports, comments, whitespace and trailing commas left out, so a copy reformatted by Biome compares
 * equal to the documentation's.
 */
export function normalizeCode(code: string): string {
  return code
    .split('\n')
    .filter((line) => !/^\s*import\s/.test(line))
    .map((line) => line.replace(/(^|\s)\/\/.*$/, ''))
    .join('')
    .replace(/\s+/g, '')
    .replace(/,(?=[)\]}])/g, '');
}

/** The block's paragraphs (split at blank lines), normalized, that `source` does not hold. */
export function paragraphsMissingFrom({ block, source }: { block: CodeBlock; source: string }): string[] {
  const held = normalizeCode(source);
  return block.code
    .split(/\n\s*\n/)
    .map(normalizeCode)
    .filter((paragraph) => paragraph !== '' && !held.includes(paragraph));
}

/**
 * The files a run of messages read and modified, from their assistant tool calls: the tool's name (or, for an editor
 * tool such as `str_replace_editor`, its `command` argument) against the read and modified patterns, the paths from
 * its path-like arguments. Shell tools (`bash`, `execute_bash`, `shell`, `run_command` with a `command`) are read by
 * `shell-file-touches.ts`. Pure.
 */
import type { ConversationMessage, ToolCall } from '../../conversation/types.js';
import type { FileToolPatterns } from '../compaction-settings.js';
import { patchFileTouches, shellFileTouches, type FileTouches } from './shell-file-touches.js';

export type { FileTouches };

/** Arguments that name files, whatever they hold (keys compared lower-cased without `_` and `-`). */
const PATH_KEYS = new Set([
  'path',
  'paths',
  'file',
  'files',
  'filepath',
  'filepaths',
  'filename',
  'filenames',
  'absolutepath',
  'relativepath',
  'notebookpath',
  'targetfile',
  'sourcefile',
  'oldpath',
  'newpath',
  'sourcepath',
  'targetpath',
  'destinationpath',
]);
/**
 * Arguments that name a file only when their value looks like a path: τ-bench's `search_direct_flight` has
 * `destination: "JFK"`, which is no file.
 */
const MAYBE_PATH_KEYS = new Set(['target', 'source', 'destination', 'dest', 'src', 'dst', 'dir', 'directory']);
/** Tools that run a command line, when they carry one. */
const SHELL_WORDS = new Set(['bash', 'shell', 'sh', 'zsh', 'terminal', 'run', 'execute', 'exec', 'cmd']);
const COMMAND_KEYS = ['command', 'cmd', 'script'];
/** Tools that apply a patch given in their arguments. */
const PATCH_WORDS = new Set(['patch', 'diff']);
/** Tools after which an editor without a path edits that file (SWE-agent's `open` / `create`, then `edit`, `insert`). */
const OPENING_WORDS = new Set(['open', 'create']);
/**
 * Search tools: a file name they are given is what they look for (SWE-agent's `find_file {file_name}`), not a file
 * read; only their path and directory arguments (where they look) count.
 */
const SEARCH_WORDS = new Set(['find', 'search', 'grep', 'glob']);
/** Longer than this, a string is no path. */
const MAX_PATH_INPUT = 4_096;

/** The words of a tool name, lower-cased: split at anything not a letter or digit, and at camelCase humps. */
export function nameWords(name: string): string[] {
  return name
    .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');
}

/** Each pattern's words; a pattern matches a name whose words hold them consecutively. */
function compile(patterns: readonly string[]): string[][] {
  return patterns.map(nameWords).filter((words) => words.length > 0);
}

function matchesAny(words: readonly string[], patterns: readonly string[][]): boolean {
  return patterns.some((p) => words.some((_, i) => p.every((w, k) => words[i + k] === w)));
}

export type FileToolKind = 'read' | 'modified';

/** Whether a tool (or an editor command) reads or modifies files by its name; modified wins when both match. */
export function fileToolKind(name: string, patterns: FileToolPatterns): FileToolKind | undefined {
  const words = nameWords(name);
  if (matchesAny(words, compile(patterns.modified))) return 'modified';
  if (matchesAny(words, compile(patterns.read))) return 'read';
  return undefined;
}

/** The paths of `read` and `modified` made distinct, first seen first; a path both read and modified is modified. */
export function distinctTouches(touches: FileTouches): FileTouches {
  const modified = [...new Set(touches.modified)];
  const written = new Set(modified);
  return { read: [...new Set(touches.read)].filter((p) => !written.has(p)), modified };
}

/** The files the tool calls of `messages` read and modified. */
export function fileTouches(messages: readonly Pick<ConversationMessage, 'toolCalls'>[], patterns: FileToolPatterns): FileTouches {
  const compiled = { read: compile(patterns.read), modified: compile(patterns.modified) };
  const all: FileTouches = { read: [], modified: [] };
  let openFile: string | undefined;
  for (const call of messages.flatMap((m) => m.toolCalls ?? [])) {
    const touched = callTouches(call, compiled, openFile);
    if (touched.opened !== undefined) openFile = touched.opened;
    all.read.push(...touched.read.map(normalizePath));
    all.modified.push(...touched.modified.map(normalizePath));
  }
  return distinctTouches({ read: all.read.filter(Boolean), modified: all.modified.filter(Boolean) });
}

function callTouches(call: ToolCall, patterns: { read: string[][]; modified: string[][] }, openFile: string | undefined): FileTouches & { opened?: string } {
  const none = { read: [], modified: [] };
  const args = parseArguments(call.function?.arguments);
  if (args === undefined) return none;
  const words = nameWords(call.function.name ?? '');
  const command = COMMAND_KEYS.map((k) => args[k]).find((v) => typeof v === 'string' || isStrings(v)) as string | string[] | undefined;
  if (command !== undefined && words.some((w) => SHELL_WORDS.has(w))) return shellFileTouches(command);
  // An editor tool says what it does in a one-word `command` (`view`, `create`, `str_replace`, `insert`).
  const commandWords = typeof command === 'string' && /^[\p{L}_-]+$/u.test(command) ? nameWords(command) : [];
  const kindOf = (w: string[]) => (matchesAny(w, patterns.modified) ? 'modified' : matchesAny(w, patterns.read) ? 'read' : undefined);
  const kind = kindOf(commandWords) ?? kindOf(words);
  if (kind === undefined) return none;
  const searching = kind === 'read' && [...words, ...commandWords].some((w) => SEARCH_WORDS.has(w));
  const paths = argumentPaths(args, searching);
  if (kind === 'modified' && [...words, ...commandWords].some((w) => PATCH_WORDS.has(w))) {
    for (const value of Object.values(args)) if (typeof value === 'string') paths.push(...patchFileTouches(value).modified);
  }
  const opened = [...words, ...commandWords].some((w) => OPENING_WORDS.has(w)) && paths.length === 1 ? paths[0] : undefined;
  if (kind === 'modified' && paths.length === 0 && openFile !== undefined) paths.push(openFile);
  return { ...(kind === 'read' ? { read: paths, modified: [] } : { read: [], modified: paths }), ...(opened !== undefined ? { opened } : {}) };
}

/** The arguments as an object, or undefined when they are not a JSON object (a model's broken JSON is ignored). */
function parseArguments(text: unknown): Record<string, unknown> | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function isStrings(value: unknown): value is string[] {
  return Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string');
}

/**
 * Paths in the path-like arguments: strings, lists of strings, or lists of objects with path-like keys (one level);
 * with `scopes`, only keys naming a path or a directory.
 */
function argumentPaths(args: Record<string, unknown>, scopes: boolean, nested = false): string[] {
  const paths: string[] = [];
  for (const [key, value] of Object.entries(args)) {
    const name = key.toLowerCase().replace(/[_-]/g, '');
    const sure = PATH_KEYS.has(name);
    if (!sure && !MAYBE_PATH_KEYS.has(name)) continue;
    if (scopes && !/path|dir/.test(name)) continue;
    const take = (v: unknown) => {
      if (typeof v === 'string' && v.trim() !== '' && v.length <= MAX_PATH_INPUT && (sure || looksLikePath(v))) paths.push(v.trim());
      else if (!nested && typeof v === 'object' && v !== null && !Array.isArray(v)) paths.push(...argumentPaths(v as Record<string, unknown>, scopes, true));
    };
    if (Array.isArray(value)) value.forEach(take);
    else take(value);
  }
  return paths;
}

/** A separator, a leading `~` or `.`, or a file extension. */
function looksLikePath(value: string): boolean {
  return !/\s/.test(value.trim()) && (/[/\\]/.test(value) || /^[~.]/.test(value) || /\.[A-Za-z0-9_]{1,12}$/.test(value));
}

/** `./a.ts` and `a.ts` are one file. */
function normalizePath(path: string): string {
  return path.replace(/^(\.\/)+/, '');
}

/**
 * The files a shell command line reads and modifies, for the files footer. Conservative on purpose: only literal
 * words (no variables, substitutions or globs) given to a few well-known programs (`cat`, `head`, `sed`, `grep`,
 * `rm`, `mv`, `cp`, `tee`, ...), redirections (`> f`, `>> f`, `< f`) and patches fed to `apply_patch` / `git apply`
 * count. Anything else (`python x.py`, `make`, `ls`) names no file: a footer that misses a file says less, one that
 * invents a file misleads. Pure.
 */

export interface FileTouches {
  /** Paths read, first seen first. */
  read: string[];
  /** Paths modified (created, written, edited, moved, deleted), first seen first. */
  modified: string[];
}

interface Word {
  text: string;
  /** False when the word holds a variable, a substitution or a glob: what it names is not known here. */
  literal: boolean;
}

interface Command {
  words: Word[];
  redirects: { op: string; target: Word }[];
  heredocs: string[];
}

const READERS = new Set(['cat', 'tac', 'head', 'tail', 'less', 'more', 'nl', 'wc', 'bat', 'diff', 'cmp', 'xxd', 'od']);
const REMOVERS = new Set(['rm', 'rmdir', 'unlink', 'touch', 'mkdir', 'truncate', 'shred', 'tee']);
const SEARCHERS = new Set(['grep', 'egrep', 'fgrep', 'rg', 'ag']);
/** Words that run the command after them, and keywords that open one. */
const WRAPPERS = new Set([
  'sudo',
  'env',
  'time',
  'nohup',
  'command',
  'builtin',
  'exec',
  'nice',
  'if',
  'then',
  'else',
  'elif',
  'do',
  'while',
  'until',
  '!',
  '{',
]);
/** Options that take the next word as their value, by program (the rest are flags). */
const VALUE_OPTIONS: Record<string, ReadonlySet<string>> = {
  head: new Set(['-n', '-c']),
  tail: new Set(['-n', '-c']),
  sed: new Set(['-e', '-f', '-l']),
  awk: new Set(['-F', '-v', '-f']),
  grep: new Set(['-e', '-f', '-m', '-A', '-B', '-C', '--include', '--exclude', '--exclude-dir']),
  rg: new Set(['-e', '-f', '-m', '-A', '-B', '-C', '-g', '--glob', '-t', '--type', '-T']),
  truncate: new Set(['-s']),
  cp: new Set(['-t', '-S']),
  mv: new Set(['-t', '-S']),
};
VALUE_OPTIONS.egrep = VALUE_OPTIONS.grep!;
VALUE_OPTIONS.fgrep = VALUE_OPTIONS.grep!;
VALUE_OPTIONS.ag = VALUE_OPTIONS.grep!;

/** A command line (`bash -lc` text) or an argv (`["cat", "a.ts"]`, `["bash", "-lc", "..."]`, `["apply_patch", patch]`). */
export function shellFileTouches(command: string | readonly string[]): FileTouches {
  const touches: FileTouches = { read: [], modified: [] };
  if (typeof command !== 'string') {
    const [program, flag, script] = command;
    if (program !== undefined && /^(ba|z|da)?sh$/.test(basename(program)) && /^-\w*c$/.test(flag ?? '') && typeof script === 'string') {
      return shellFileTouches(script);
    }
    if (program === 'apply_patch' && command[1] !== undefined) return patchFileTouches(command[1]);
    addCommand({ words: command.map((text) => ({ text, literal: true })), redirects: [], heredocs: [] }, touches);
    return touches;
  }
  for (const parsed of parseCommands(command)) addCommand(parsed, touches);
  return touches;
}

/** The files a patch names: `*** Add|Update|Delete File:` / `*** Move to:` (apply_patch), `--- a/` and `+++ b/` (unified diff). */
export function patchFileTouches(patch: string): FileTouches {
  const touches: FileTouches = { read: [], modified: [] };
  const lines = patch.split(/\r?\n/);
  lines.forEach((line, i) => {
    const marker = /^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+)$/.exec(line);
    if (marker) touches.modified.push(marker[1]!.trim());
    // A unified diff's file header is a `---` line then a `+++` line; the new name, or the old one for a deletion.
    const next = lines[i + 1] ?? '';
    if (line.startsWith('--- ') && next.startsWith('+++ ')) {
      const [from, to] = [line, next].map((l) =>
        l
          .slice(4)
          .split('\t')[0]!
          .trim()
          .replace(/^[ab]\//, ''),
      );
      const path = to === '/dev/null' ? from : to;
      if (path && path !== '/dev/null') touches.modified.push(path);
    }
  });
  return touches;
}

function addCommand(command: Command, touches: FileTouches): void {
  for (const { op, target } of command.redirects) {
    if (!isFileWord(target)) continue;
    if (op.includes('>')) touches.modified.push(target.text);
    else if (op === '<') touches.read.push(target.text);
  }
  const words = [...command.words];
  while (words.length > 0 && (/^\w+=/.test(words[0]!.text) || WRAPPERS.has(words[0]!.text))) words.shift();
  const program = words.length > 0 && words[0]!.literal ? basename(words[0]!.text) : undefined;
  if (program === undefined) return;
  const args = operands(program, words.slice(1));
  if (program === 'apply_patch' || (program === 'git' && args[0]?.text === 'apply') || program === 'patch') {
    for (const body of command.heredocs) touches.modified.push(...patchFileTouches(body).modified);
    return;
  }
  const files = (list: Word[]) => list.filter(isFileWord).map((w) => w.text);
  if (READERS.has(program)) touches.read.push(...files(args));
  else if (REMOVERS.has(program) || program === 'mv') touches.modified.push(...files(args));
  else if (program === 'cp') {
    touches.read.push(...files(args.slice(0, -1)));
    touches.modified.push(...files(args.slice(-1)));
  } else if (program === 'sed' || program === 'awk' || SEARCHERS.has(program)) {
    // The first operand is the script or pattern unless an option gave it.
    const given = words.slice(1).some((w) => ['-e', '-f', '--regexp', '--file'].includes(w.text) || /^-[A-Za-z]*[ef]$/.test(w.text));
    const inPlace = program === 'sed' && words.some((w) => /^(-[A-Za-z]*i|--in-place)/.test(w.text));
    const targets = files(given ? args : args.slice(1));
    (inPlace ? touches.modified : touches.read).push(...targets);
  }
}

/** The words that are not options (nor an option's value); `--` ends the options. */
function operands(program: string, args: readonly Word[]): Word[] {
  const valued = VALUE_OPTIONS[program];
  const out: Word[] = [];
  let optionsDone = false;
  for (let i = 0; i < args.length; i++) {
    const word = args[i]!;
    if (!optionsDone && word.text === '--') optionsDone = true;
    else if (!optionsDone && word.text.startsWith('-') && word.text.length > 1) {
      if (valued?.has(word.text)) i++;
    } else out.push(word);
  }
  return out;
}

/** A literal word that can name a file: not stdin (`-`), a directory alias or a device. */
function isFileWord(word: Word): boolean {
  return word.literal && word.text !== '' && !/^(-|\.{1,2}|\/dev\/.*|&\d*)$/.test(word.text);
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/**
 * Split a command line into simple commands: words (quotes removed), redirections and here-document bodies.
 * Separators: newlines, `;`, `&`, `|`, `&&`, `||`, parentheses and braces' words are just words.
 */
function parseCommands(script: string): Command[] {
  const commands: Command[] = [];
  let current: Command = { words: [], redirects: [], heredocs: [] };
  let word: Word | undefined;
  let pendingRedirect: string | undefined;
  const pendingHeredocs: { delimiter: string; strip: boolean }[] = [];
  const endWord = () => {
    if (word === undefined) return;
    if (pendingRedirect === '<<' || pendingRedirect === '<<-') {
      pendingHeredocs.push({ delimiter: word.text, strip: pendingRedirect === '<<-' });
    } else if (pendingRedirect === '<<<') {
      // A here-string is text, not a file.
    } else if (pendingRedirect !== undefined) current.redirects.push({ op: pendingRedirect, target: word });
    else current.words.push(word);
    pendingRedirect = undefined;
    word = undefined;
  };
  const endCommand = () => {
    endWord();
    if (current.words.length > 0 || current.redirects.length > 0) commands.push(current);
    current = { words: [], redirects: [], heredocs: [] };
  };
  const append = (text: string, literal = true) => {
    word ??= { text: '', literal: true };
    word.text += text;
    if (!literal) word.literal = false;
  };

  let i = 0;
  while (i < script.length) {
    const c = script[i]!;
    if (c === '\n') {
      endWord();
      // Here-document bodies follow the line that opened them; they belong to its last command.
      const owner = current;
      for (const { delimiter, strip } of pendingHeredocs.splice(0)) {
        const body: string[] = [];
        let next = script.indexOf('\n', i + 1);
        let start = i + 1;
        for (;;) {
          const line = script.slice(start, next < 0 ? undefined : next);
          if ((strip ? line.replace(/^\t+/, '') : line) === delimiter || next < 0) break;
          body.push(line);
          start = next + 1;
          next = script.indexOf('\n', start);
        }
        owner.heredocs.push(body.join('\n'));
        i = next < 0 ? script.length : next;
      }
      endCommand();
      i++;
    } else if (/\s/.test(c)) {
      endWord();
      i++;
    } else if (c === '#' && word === undefined) {
      const eol = script.indexOf('\n', i);
      i = eol < 0 ? script.length : eol;
    } else if (c === '\\') {
      if (script[i + 1] !== '\n') append(script[i + 1] ?? '');
      i += 2;
    } else if (c === "'") {
      const close = script.indexOf("'", i + 1);
      append(script.slice(i + 1, close < 0 ? undefined : close));
      i = close < 0 ? script.length : close + 1;
    } else if (c === '"') {
      let j = i + 1;
      let text = '';
      let literal = true;
      for (; j < script.length && script[j] !== '"'; j++) {
        if (script[j] === '\\' && j + 1 < script.length) text += script[++j];
        else {
          if (script[j] === '$' || script[j] === '`') literal = false;
          text += script[j];
        }
      }
      append(text, literal);
      i = j + 1;
    } else if (c === '>' || c === '<') {
      // A word of digits just before is a file descriptor (`2>`), not a file.
      if (word !== undefined && /^\d+$/.test(word.text)) word = undefined;
      endWord();
      const op = /^(<<<|<<-|<<|>>|>\||>&|<>|>|<)/.exec(script.slice(i))![1]!;
      i += op.length;
      if (op === '>&' && /^\d/.test(script.slice(i))) i += /^\d+-?/.exec(script.slice(i))![0].length;
      else pendingRedirect = op;
    } else if (c === '&' && script[i + 1] === '>') {
      endWord();
      pendingRedirect = script[i + 2] === '>' ? '>>' : '>';
      i += script[i + 2] === '>' ? 3 : 2;
    } else if (c === ';' || c === '&' || c === '|' || c === '(' || c === ')') {
      endCommand();
      i++;
    } else {
      append(c, !/[$`*?[\]{}]/.test(c));
      i++;
    }
  }
  endCommand();
  return commands;
}

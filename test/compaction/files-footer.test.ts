/**
 * The files footer: the files a batch's tool calls read and modified, appended to every summary batch whatever the
 * summarizer wrote; the union of the children's at higher depths. The pure extraction and footer form first, then
 * through createMemfold: batch texts, the clip-archive, `filesFooter: false`, re-summarized batches.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_FILE_TOOL_PATTERNS, resolveCompactionSettings } from '../../src/compaction/compaction-settings.js';
import { fileTouches, fileToolKind, nameWords } from '../../src/compaction/footer/file-touches.js';
import {
  batchFilesFooter,
  filesFooterOf,
  formatFilesFooter,
  MAX_FOOTER_PATH_CHARS,
  splitFilesFooter,
  unionFilesFooters,
  withFilesFooter,
  withoutFilesFooter,
  type FilesFooter,
} from '../../src/compaction/footer/files-footer.js';
import { batchBody, batchContent, parseHeader } from '../../src/compaction/format/headers.js';
import { shellFileTouches } from '../../src/compaction/footer/shell-file-touches.js';
import type { NewMessage, ToolCall } from '../../src/conversation/types.js';
import { InvalidConfigError } from '../../src/errors.js';
import { createMemfold } from '../../src/memfold.js';

const patterns = DEFAULT_FILE_TOOL_PATTERNS;
const call = (name: string, args: unknown, id = name): ToolCall => ({
  id,
  type: 'function',
  function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) },
});
const touches = (...calls: ToolCall[]) => fileTouches([{ toolCalls: calls }], patterns);
const chars4 = (text: string) => Math.ceil(text.length / 4);
const footer = (read: string[], modified: string[], moreRead = 0, moreModified = 0): FilesFooter => ({ read, modified, moreRead, moreModified });

describe('file touches from tool calls', () => {
  it('splits tool names into words, camelCase and separators alike', () => {
    expect(nameWords('str_replace_editor')).toEqual(['str', 'replace', 'editor']);
    expect(nameWords('MultiEdit')).toEqual(['multi', 'edit']);
    expect(nameWords('readHTMLFile')).toEqual(['read', 'html', 'file']);
    expect(nameWords('fs.write-file')).toEqual(['fs', 'write', 'file']);
  });

  it('matches patterns against whole words: modified wins, `edit` is not `credit`', () => {
    expect(fileToolKind('read_file', patterns)).toBe('read');
    expect(fileToolKind('Read', patterns)).toBe('read');
    expect(fileToolKind('MultiEdit', patterns)).toBe('modified');
    expect(fileToolKind('search_and_replace', patterns)).toBe('modified');
    expect(fileToolKind('apply_patch', patterns)).toBe('modified');
    expect(fileToolKind('apply_credit', patterns)).toBeUndefined();
    expect(fileToolKind('get_user_details', patterns)).toBeUndefined();
    expect(fileToolKind('fetch_page', { read: ['fetch'], modified: [] })).toBe('read');
    expect(fileToolKind('read_file', { read: [], modified: [] })).toBeUndefined();
  });

  it('tells read from modified by tool name and path arguments; a file both read and modified is modified', () => {
    const result = touches(
      call('read_file', { path: 'src/app.ts' }),
      call('Read', { file_path: '/repo/README.md' }),
      call('view', { filename: 'docs/a.md' }),
      call('write_file', { file_path: 'src/new.ts', content: 'x' }),
      call('Edit', { file_path: 'src/app.ts', old_string: 'a', new_string: 'b' }),
      call('read_many_files', { paths: ['lib/x.ts', 'lib/y.ts', 3] }),
      call('move_file', { source: 'old/name.ts', destination: 'new/name.ts' }),
    );
    expect(result).toEqual({
      read: ['/repo/README.md', 'docs/a.md', 'lib/x.ts', 'lib/y.ts'],
      modified: ['src/new.ts', 'src/app.ts', 'old/name.ts', 'new/name.ts'],
    });
  });

  it('lets patterns be configured', () => {
    const calls = [{ toolCalls: [call('fetch', { path: 'a.txt' }), call('save', { path: 'b.txt' }), call('read', { path: 'c.txt' })] }];
    expect(fileTouches(calls, { read: ['fetch'], modified: ['save'] })).toEqual({ read: ['a.txt'], modified: ['b.txt'] });
    expect(fileTouches(calls, patterns)).toEqual({ read: ['c.txt'], modified: [] });
  });

  it('decides str_replace_editor by its command', () => {
    expect(
      touches(
        call('str_replace_editor', { command: 'view', path: '/repo/a.py' }),
        call('str_replace_editor', { command: 'create', path: '/repo/b.py', file_text: 'x' }),
        call('str_replace_editor', { command: 'str_replace', path: '/repo/c.py', old_str: 'a', new_str: 'b' }),
        call('str_replace_editor', { command: 'insert', path: '/repo/d.py', insert_line: 3, new_str: 'y' }),
        call('str_replace_editor', { command: 'view', path: '/repo/e.py' }),
      ),
    ).toEqual({ read: ['/repo/a.py', '/repo/e.py'], modified: ['/repo/b.py', '/repo/c.py', '/repo/d.py'] });
  });

  it('follows SWE-agent: an edit without a path edits the file last opened or created; find_file reads nothing', () => {
    expect(
      touches(
        call('find_file', { file_name: 'fields.py', dir: 'src' }),
        call('open', { path: 'src/marshmallow/fields.py', line_number: 1474 }),
        call('edit', { search: 'a', replace: 'b' }),
        call('create', { filename: 'reproduce.py' }),
        call('insert', { text: 'print(1)' }),
      ),
    ).toEqual({ read: [], modified: ['src/marshmallow/fields.py', 'reproduce.py'] });
    // A search tool's file name is what it looks for; where it looks is read.
    expect(touches(call('Grep', { pattern: 'TODO', path: 'src/lib' }), call('glob', { pattern: '**/*.ts', path: 'src' }))).toEqual({
      read: ['src/lib', 'src'],
      modified: [],
    });
  });

  it('ignores arguments that are not a JSON object, other tools, and path-like keys holding no path', () => {
    expect(
      touches(
        call('read_file', '{"path": "a.ts"'),
        call('read_file', 'not json'),
        call('write_file', '["a.ts"]'),
        call('search_direct_flight', { origin: 'SFO', destination: 'JFK', date: '2024-05-17' }),
        call('book_reservation', { path: 'x.ts' }),
        call('read_file', { path: '   ' }),
        call('read_file', { path: './ok.ts' }),
      ),
    ).toEqual({ read: ['ok.ts'], modified: [] });
  });

  it('reads patches given to apply_patch', () => {
    const patch = ['*** Begin Patch', '*** Update File: src/a.ts', '@@', '-x', '+y', '*** Add File: src/b.ts', '+z', '*** End Patch'].join('\n');
    const diff = ['--- a/lib/c.py', '+++ b/lib/c.py', '@@ -1 +1 @@', '--- not a header', '+new'].join('\n');
    expect(touches(call('apply_patch', { input: patch }), call('apply_patch', { patch: diff }))).toEqual({
      read: [],
      modified: ['src/a.ts', 'src/b.ts', 'lib/c.py'],
    });
  });

  it('reads shell commands conservatively: known programs, redirections, literal words only', () => {
    expect(shellFileTouches('cat src/a.ts | head -n 5 && sed -n 10,20p lib/b.py')).toEqual({ read: ['src/a.ts', 'lib/b.py'], modified: [] });
    expect(shellFileTouches("sed -i 's/a/b/' src/c.ts; echo hi > out.txt 2>&1; rm -f tmp.log")).toEqual({
      read: [],
      modified: ['src/c.ts', 'out.txt', 'tmp.log'],
    });
    expect(shellFileTouches('grep -rn "needle" src/ tests/x.py; cp a.txt b.txt; wc -l < in.csv')).toEqual({
      read: ['src/', 'tests/x.py', 'a.txt', 'in.csv'],
      modified: ['b.txt'],
    });
    // Variables, globs, interpreters and listings name no file.
    expect(shellFileTouches('cat $FILE *.ts; python reproduce.py; ls -F; make test 2>/dev/null')).toEqual({ read: [], modified: [] });
    // A here-document's body is not a command; apply_patch's is a patch.
    expect(shellFileTouches("cat > notes.md <<'EOF'\nrm -rf everything\nEOF\ncat notes.md")).toEqual({ read: ['notes.md'], modified: ['notes.md'] });
    expect(shellFileTouches('apply_patch <<"EOF"\n*** Begin Patch\n*** Delete File: old.ts\n*** End Patch\nEOF')).toEqual({ read: [], modified: ['old.ts'] });
    expect(shellFileTouches(['bash', '-lc', 'cat a.ts'])).toEqual({ read: ['a.ts'], modified: [] });
    expect(touches(call('bash', { command: 'rm reproduce.py' }), call('execute_bash', { command: 'cat setup.py' }))).toEqual({
      read: ['setup.py'],
      modified: ['reproduce.py'],
    });
    expect(touches(call('shell', { command: ['apply_patch', '*** Begin Patch\n*** Add File: n.ts\n+x\n*** End Patch'] }))).toEqual({
      read: [],
      modified: ['n.ts'],
    });
  });
});

describe('the footer', () => {
  it('is two lines after a blank line, parsed back whole, quoting paths that would not parse', () => {
    const files = footer(['src/a.ts', 'odd, name.ts', '"quoted".md'], ['x (+1 more).ts', 'src/b.ts'], 2);
    const text = withFilesFooter('The user fixed the parser.', files, 1_000, chars4);
    expect(text).toBe(
      'The user fixed the parser.\n\nFiles read: src/a.ts, "odd, name.ts", "\\"quoted\\".md" (+2 more)\nFiles modified: "x (+1 more).ts", src/b.ts',
    );
    expect(splitFilesFooter(text)).toEqual({ text: 'The user fixed the parser.', footer: files });
    expect(withFilesFooter('', footer([], ['a.ts']), 1_000, chars4)).toBe('Files modified: a.ts');
    expect(splitFilesFooter('Files modified: a.ts').footer).toEqual(footer([], ['a.ts']));
    expect(withFilesFooter('Nothing touched.', footer([], []), 1_000, chars4)).toBe('Nothing touched.');
  });

  it('survives the batch header and framing, and batchBody still gives the body', () => {
    const header = { depth: 0, start: '2024-01-01T00:00:00.000Z', end: '2024-01-01T00:05:00.000Z', count: 4 };
    const content = batchContent(header, withFilesFooter('Summary.', footer(['a.ts'], ['b.ts']), 1_000, chars4));
    expect(parseHeader(content)).toEqual(header);
    expect(batchBody(content)).toBe('Summary.\n\nFiles read: a.ts\nFiles modified: b.ts');
    expect(batchFilesFooter(content)).toEqual(footer(['a.ts'], ['b.ts']));
    expect(withoutFilesFooter(content)).toBe(`${content.split('\n')[0]}\nSummary.`);
  });

  it('is no footer unless it is the last lines after a blank line', () => {
    expect(splitFilesFooter('Files read: a.ts\n\nMore text.').footer).toBeUndefined();
    expect(splitFilesFooter('Text.\nFiles read: a.ts').footer).toBeUndefined();
    expect(splitFilesFooter('Text.\n\nFiles modified: a.ts\nFiles read: b.ts').footer).toBeUndefined();
    expect(splitFilesFooter('Text.\n\nFiles read: "unterminated').footer).toBeUndefined();
  });

  it('replaces a footer the summarizer wrote itself', () => {
    const echoed = 'Summary.\n\nFiles read: old.ts';
    expect(withFilesFooter(echoed, footer(['new.ts'], []), 1_000, chars4)).toBe('Summary.\n\nFiles read: new.ts');
  });

  it('is bounded: 20 paths a list, then counted; long paths bounded; line breaks gone; within a share of the batch', () => {
    const many = Array.from({ length: 30 }, (_, i) => ({ toolCalls: [call('read_file', { path: `src/file-${i}.ts` })] }));
    const files = filesFooterOf(many, patterns);
    expect(files.read).toHaveLength(30);
    const text = formatFilesFooter(files, 10_000, chars4);
    expect(text).toBe(`Files read: ${files.read.slice(0, 20).join(', ')} (+10 more)`);

    const long = `${'deep/'.repeat(100)}name.ts`;
    const odd = filesFooterOf([{ toolCalls: [call('write_file', { path: long }), call('write_file', { path: 'a\nb\u2028c.ts' })] }], patterns);
    expect(odd.modified[0]!.length).toBe(MAX_FOOTER_PATH_CHARS);
    expect(odd.modified[0]!.endsWith('deep/deep/name.ts')).toBe(true);
    expect(odd.modified[1]).toBe('a?b?c.ts');

    // Within a quarter of maxSummaryTokens, the summary cut to leave it room: the whole within maxSummaryTokens.
    const body = withFilesFooter('word '.repeat(400), files, 100, chars4);
    const parsed = splitFilesFooter(body);
    expect(chars4(body)).toBeLessThanOrEqual(100);
    expect(parsed.footer!.read.length + parsed.footer!.moreRead).toBe(30);
    expect(chars4(formatFilesFooter(parsed.footer!, 1_000, chars4))).toBeLessThanOrEqual(25);
    // Nothing fits: no footer at all.
    expect(formatFilesFooter(files, 3, chars4)).toBe('');
  });

  it('unions children: first seen first, modified wins, unseen counts added', () => {
    const union = unionFilesFooters([footer(['a.ts', 'b.ts'], ['c.ts'], 1), undefined, footer(['c.ts', 'd.ts'], ['a.ts'], 0, 2)]);
    expect(union).toEqual(footer(['b.ts', 'd.ts'], ['c.ts', 'a.ts'], 1, 2));
  });
});

describe('settings', () => {
  it('defaults to a footer with the default patterns; validates the patterns by field', () => {
    expect(resolveCompactionSettings()).toMatchObject({ filesFooter: true, fileToolPatterns: DEFAULT_FILE_TOOL_PATTERNS });
    const own = { read: ['fetch'], modified: ['save'] };
    const resolved = resolveCompactionSettings({ fileToolPatterns: own });
    own.read.push('later');
    expect(resolved.fileToolPatterns).toEqual({ read: ['fetch'], modified: ['save'] });
    const field = (input: unknown) => {
      try {
        resolveCompactionSettings(input as never);
      } catch (error) {
        return error instanceof InvalidConfigError ? error.field : 'other';
      }
      return 'none';
    };
    expect(field({ filesFooter: 'yes' })).toBe('compaction.filesFooter');
    expect(field({ fileToolPatterns: ['read'] })).toBe('compaction.fileToolPatterns');
    expect(field({ fileToolPatterns: { read: ['read'] } })).toBe('compaction.fileToolPatterns.modified');
    expect(field({ fileToolPatterns: { read: 'read', modified: [] } })).toBe('compaction.fileToolPatterns.read');
    expect(field({ fileToolPatterns: { read: ['read', '__'], modified: [] } })).toBe('compaction.fileToolPatterns.read[1]');
    expect(field({ fileToolPatterns: { read: [], modified: [], shell: [] } })).toBe('compaction.fileToolPatterns.shell');
    expect(field({ fileToolPatterns: { read: [], modified: [] } })).toBe('none');
  });
});

/** A coding session: the request, then turns that read, edit and run files, then plain talk to push them out. */
function codingSession(from: number, files: { read: string; edited: string; shell: string }): NewMessage[] {
  const at = (k: number) => new Date(Date.UTC(2024, 6, 1, 9, from * 20 + k)).toISOString();
  const filler = (n: number) => `step ${n}: ${'the agent keeps working on the parser '.repeat(6)}`;
  const tool = (k: number, name: string, args: unknown): NewMessage[] => [
    { role: 'assistant', content: '', toolCalls: [call(name, args, `call_${from}_${k}`)], createdAt: at(k) },
    { role: 'tool', toolCallId: `call_${from}_${k}`, name, content: `done ${k}`, createdAt: at(k) },
  ];
  return [
    { role: 'user', content: `Please fix bug ${from}. ${filler(0)}`, createdAt: at(0) },
    ...tool(1, 'read_file', { path: files.read }),
    ...tool(2, 'str_replace_editor', { command: 'str_replace', path: files.edited, old_str: 'a', new_str: 'b' }),
    ...tool(3, 'bash', { command: `cat ${files.shell}` }),
    { role: 'assistant', content: `Fixed bug ${from}. ${filler(1)}`, createdAt: at(4) },
    ...Array.from({ length: 6 }, (_, k): NewMessage[] => [
      { role: 'user', content: `And then ${from}.${k}? ${filler(k)}`, createdAt: at(5 + 2 * k) },
      { role: 'assistant', content: `Done ${from}.${k}. ${filler(k + 1)}`, createdAt: at(6 + 2 * k) },
    ]).flat(),
  ];
}

async function open(compaction: Record<string, unknown> = {}) {
  const memfold = await createMemfold({ store: 'memory', env: {}, compaction: { contextWindow: 2_000, ...compaction } });
  const summaries = () => memfold.archive.list({ conversationId: 'code', kind: 'summary' });
  const clip = async () => (await memfold.context('code')).find((m) => m.kind === 'clip_archive')?.content ?? '';
  return { memfold, summaries, clip };
}

const opening: NewMessage = { role: 'user', content: 'We are working on the parser today.', createdAt: '2024-07-01T08:00:00.000Z' };

describe('through createMemfold', () => {
  it('every batch ends with the files its messages read and modified, and the clip-archive shows them', async () => {
    const { memfold, summaries, clip } = await open();
    await memfold.append('code', [opening, ...codingSession(1, { read: 'src/lexer.ts', edited: 'src/parser.ts', shell: 'docs/grammar.md' })]);
    const result = await memfold.compact('code', { force: true });
    expect(result.status).toBe('compacted');
    const batches = await summaries();
    expect(batches.length).toBeGreaterThan(0);
    const union = unionFilesFooters(batches.map((b) => batchFilesFooter(b.content)));
    expect(union).toEqual(footer(['src/lexer.ts', 'docs/grammar.md'], ['src/parser.ts']));
    expect(batchBody(batches[0]!.content)).toMatch(/\n\nFiles read: src\/lexer\.ts, docs\/grammar\.md\nFiles modified: src\/parser\.ts$/);
    for (const batch of batches) expect(memfold.compactor.settings.maxSummaryTokens).toBeGreaterThanOrEqual(memfold.tokens.count(batchBody(batch.content)));
    expect(await clip()).toContain('Files modified: src/parser.ts');
    await memfold.close();
  });

  it('with filesFooter: false, no batch and no clip-archive names the files', async () => {
    const { memfold, summaries, clip } = await open({ filesFooter: false });
    await memfold.append('code', [opening, ...codingSession(1, { read: 'src/lexer.ts', edited: 'src/parser.ts', shell: 'docs/grammar.md' })]);
    expect((await memfold.compact('code', { force: true })).status).toBe('compacted');
    // The offline summarizer's own `Files and tools:` section stays: only memfold's footer is left out.
    for (const batch of await summaries()) expect(batch.content).not.toMatch(/^Files (read|modified):/m);
    expect(await clip()).not.toMatch(/Files (read|modified):/);
    await memfold.close();
  });

  it('a re-summarized batch keeps the union of its children', async () => {
    const { memfold, summaries, clip } = await open();
    await memfold.append('code', [opening]);
    const sessions = [
      { read: 'src/lexer.ts', edited: 'src/parser.ts', shell: 'docs/grammar.md' },
      { read: 'src/parser.ts', edited: 'src/ast.ts', shell: 'test/parser.test.ts' },
      { read: 'src/ast.ts', edited: 'README.md', shell: 'src/lexer.ts' },
    ];
    for (const [i, files] of sessions.entries()) {
      await memfold.append('code', codingSession(i + 1, files));
      expect((await memfold.compact('code', { force: true })).status).toBe('compacted');
    }
    const depth0 = (await summaries()).filter((b) => b.depth === 0 && !b.parentLabel);
    if (depth0.length >= 2) await memfold.compactor.resummarizeDepth('code', 0);
    const top = (await summaries()).filter((b) => b.depth > 0);
    expect(top.length).toBeGreaterThan(0);
    const children = await summaries();
    for (const parent of top) {
      const own = children.filter((c) => parent.sourceIds.includes(c.label));
      expect(own.length).toBeGreaterThanOrEqual(2);
      expect(batchFilesFooter(parent.content)).toEqual(unionFilesFooters(own.map((c) => batchFilesFooter(c.content))));
    }
    // Every file touched so far is still named by the frontier's batches, read ones that were later edited as modified.
    const frontier = (await summaries()).filter((b) => !b.parentLabel);
    const known = unionFilesFooters(frontier.map((b) => batchFilesFooter(b.content)));
    expect(known.modified).toEqual(expect.arrayContaining(['src/parser.ts', 'src/ast.ts', 'README.md']));
    expect(known.read).toEqual(expect.arrayContaining(['src/lexer.ts', 'docs/grammar.md', 'test/parser.test.ts']));
    expect(await clip()).toContain('README.md');
    await memfold.close();
  });
});

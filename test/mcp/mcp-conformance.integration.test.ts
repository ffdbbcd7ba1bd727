/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned) against `memfold mcp --http` as an
 * operator starts it on loopback: every server scenario that applies to a server offering tools alone passes. The
 * suite's CLI runs as a child process, one scenario at a time, and its checks are read from the results it writes.
 * Everything stays on 127.0.0.1: no scenario here calls a tool that opens a store, so the home is an empty folder.
 *
 * The suite's other scenarios are listed below with why they do not apply, and the test fails when the suite's list
 * changes (an upgrade adds or renames a scenario), so that each new one is sorted into one of the two lists.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';

const BIN = new URL('../../bin/memfold.js', import.meta.url).pathname;
const SUITE = path.join(path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json')), 'dist/index.js');
const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };

/** Scenarios a tools-only server must pass: each reports at least one SUCCESS check and no FAILURE. */
const APPLICABLE = ['server-initialize', 'ping', 'tools-list', 'tools-call-error', 'dns-rebinding-protection'];

/**
 * Scenarios about sessions and SSE streams. They apply (memfold serves Streamable HTTP), but to a stateless server that
 * answers JSON they have nothing to check: they report a WARNING that no session id was given (and INFO lines), no
 * SUCCESS. They run, and must report no FAILURE.
 */
const STATELESS = ['server-sse-polling', 'server-sse-multiple-streams'];

/** Scenarios that do not apply, and why. */
const SKIPPED: Record<string, string> = {
  'logging-set-level': 'no logging capability offered',
  'completion-complete': 'no completions capability offered (it completes prompt and resource-template arguments)',
  'tools-call-simple-text': 'calls the suite fixture tool test_simple_text, which a server with its own tools lacks',
  'tools-call-image': 'calls the fixture tool test_image_content (memfold tools answer text)',
  'tools-call-audio': 'calls the fixture tool test_audio_content (memfold tools answer text)',
  'tools-call-embedded-resource': 'calls the fixture tool test_embedded_resource (no resources offered)',
  'tools-call-mixed-content': 'calls the fixture tool test_multiple_content_types (image and resource content)',
  'tools-call-with-logging': 'calls the fixture tool test_tool_with_logging (no logging capability)',
  'tools-call-with-progress': 'calls the fixture tool test_tool_with_progress',
  'tools-call-sampling': 'calls the fixture tool test_sampling (memfold asks the client for no sampling)',
  'tools-call-elicitation': 'calls the fixture tool test_elicitation (memfold asks the client for no input)',
  'elicitation-sep1034-defaults': 'calls a fixture tool that elicits input (memfold elicits none)',
  'elicitation-sep1330-enums': 'calls a fixture tool that elicits input (memfold elicits none)',
  'json-schema-2020-12': 'looks for the fixture tool json_schema_2020_12_tool',
  'resources-list': 'no resources offered',
  'resources-read-text': 'no resources offered',
  'resources-read-binary': 'no resources offered',
  'resources-templates-read': 'no resources offered',
  'resources-subscribe': 'no resources offered',
  'resources-unsubscribe': 'no resources offered',
  'prompts-list': 'no prompts offered',
  'prompts-get-simple': 'no prompts offered',
  'prompts-get-with-args': 'no prompts offered',
  'prompts-get-embedded-resource': 'no prompts offered',
  'prompts-get-with-image': 'no prompts offered',
};

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
  details?: Record<string, unknown>;
}

function runSuite(args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) =>
    execFile(process.execPath, [SUITE, ...args], { env, timeout: 20_000 }, (error, stdout) =>
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout }),
    ),
  );
}

let home: string;
let results: string;
let server: ChildProcess;
let url: string;

beforeAll(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'memfold-conformance-'));
  results = path.join(home, 'results');
  server = spawn(process.execPath, [BIN, 'mcp', '--http', '0', '--allow', 'support-42,support-43', '--writable', '--home', home], { env });
  // The address is the first line on stdout; an exit before it fails at once, and the hook timeout bounds the rest.
  url = await new Promise<string>((resolve, reject) => {
    server.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    server.once('exit', (code) => reject(new Error(`memfold mcp exited with ${code}`)));
  });
});

afterAll(async () => {
  if (server.exitCode === null) server.kill('SIGKILL');
  await rm(home, { recursive: true, force: true });
});

/** One scenario's checks, read from the results folder the suite writes (its exit code says failed or not). */
let runs = 0;
async function scenario(name: string): Promise<{ code: number; checks: Check[] }> {
  runs += 1;
  const out = path.join(results, `${runs}-${name}`);
  const { code } = await runSuite(['server', '--url', url, '--scenario', name, '--output-dir', out]);
  const [folder] = await readdir(out);
  const checks = JSON.parse(await readFile(path.join(out, folder!, 'checks.json'), 'utf8')) as Check[];
  return { code, checks };
}

const summary = (checks: Check[]) => checks.filter((c) => c.status !== 'INFO').map((c) => `${c.status} ${c.id}${c.errorMessage ? `: ${c.errorMessage}` : ''}`);

it('sorts every server scenario of the pinned suite into run or skipped', async () => {
  const { code, stdout } = await runSuite(['list', '--server']);
  expect(code).toBe(0);
  const listed = [...stdout.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]!);
  expect(listed.sort()).toEqual([...APPLICABLE, ...STATELESS, ...Object.keys(SKIPPED)].sort());
});

it.each(APPLICABLE)('passes %s', async (name) => {
  const { code, checks } = await scenario(name);
  expect(
    summary(checks).filter((line) => !line.startsWith('SUCCESS')),
    name,
  ).toEqual([]);
  expect(checks.some((c) => c.status === 'SUCCESS')).toBe(true);
  expect(code).toBe(0);
});

it.each(STATELESS)('runs %s without a failure (stateless, JSON answers: nothing to check)', async (name) => {
  const { code, checks } = await scenario(name);
  expect(checks.filter((c) => c.status === 'FAILURE')).toEqual([]);
  expect(summary(checks)).toEqual([expect.stringMatching(/^WARNING server-sse-[a-z-]+-session$/)]);
  expect(code).toBe(0);
});

it('passes tools-call-error because a tool this server lacks is answered isError, never a protocol error', async () => {
  // The scenario calls test_error_handling, a suite fixture; memfold names the unknown tool in an isError result.
  const { checks } = await scenario('tools-call-error');
  const result = checks.find((c) => c.id === 'tools-call-error')?.details?.result;
  expect(result).toEqual({ content: [{ type: 'text', text: 'Unknown tool "test_error_handling" on this server.' }], isError: true });
});

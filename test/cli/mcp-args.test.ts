/** `memfold mcp` refuses a bad plan before it opens or serves anything: exit 2, one line naming the flag. */
import { expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';

async function run(...argv: string[]): Promise<{ code: number; err: string; out: string }> {
  let err = '';
  let out = '';
  const code = await main(['mcp', ...argv], { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, err, out };
}

it.each([
  [['--home', '/nonexistent'], '--conversation'],
  [['--conversation', 'a', '--allow', 'b'], '--allow'],
  [['--allow', 'a,,b'], '--allow'],
  [['--conversation', 'a', '--read-only', '--writable'], '--writable'],
  [['--conversation', 'a', '--host', '0.0.0.0'], '--host'],
  [['--conversation', 'a', '--token', 'a-long-enough-secret'], '--token'],
  [['--conversation', 'a', '--http', '0', '--token', 'short'], '--token'],
  [['--conversation', 'a', '--http', '0', '--host', '10.1.2.3'], '--token'],
  [['--conversation', 'a', '--http', 'x'], '--http'],
])('refuses %j naming %s', async (argv, flag) => {
  const { code, err, out } = await run(...argv);
  expect(code).toBe(2);
  expect(err.split('\n')[0]).toContain(flag);
  expect(out).toBe('');
});

/** The answer-accuracy section of report.md, pure: accuracy per category beside each method, then what it cost. */
import type { AnswerAccuracyResult, AnswerMethodResult } from './answer-accuracy.js';
import type { UsageTally } from './chat-endpoint.js';

const n = (value: number) => value.toLocaleString('en-US');
const share = (value: number) => value.toFixed(3);
const usd = (value: number | null) => (value === null ? 'no price' : `$${value.toFixed(6)}`);

function columnName(r: AnswerMethodResult): string {
  return r.method === 'full-context' ? `full-context (${n(r.window)})` : `${r.method} (${n(r.window)})`;
}

function accuracyTable(result: AnswerAccuracyResult): string[] {
  const columns = result.results;
  const categories = [...new Set(columns.flatMap((r) => Object.keys(r.accuracy)))];
  const lines = [`| category | questions | ${columns.map(columnName).join(' | ')} |`, `|---|--:|${columns.map(() => '--:').join('|')}|`];
  for (const category of categories) {
    const questions = Math.max(...columns.map((r) => r.accuracy[category]?.questions ?? 0));
    const cells = columns.map((r) => {
      const c = r.accuracy[category];
      return c ? `${share(c.accuracy)} (${c.correct}/${c.questions})` : '—';
    });
    lines.push(`| ${category} | ${n(questions)} | ${cells.join(' | ')} |`);
  }
  return lines;
}

function costTable(result: AnswerAccuracyResult): string[] {
  const lines = [
    '| method | answer calls | answer prompt / completion tokens | judge calls | judge prompt / completion tokens | memory_read calls | oldest cut (conversations / messages) | USD answer | USD judge | USD total |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  const tokens = (t: UsageTally) => `${n(t.inputTokens)}${t.cachedInputTokens > 0 ? ` (${n(t.cachedInputTokens)} cached)` : ''} / ${n(t.outputTokens)}`;
  const row = (name: string, r: Pick<AnswerMethodResult, 'usage' | 'costUsd'>, extra: string) => {
    const { answer, judge } = r.usage;
    lines.push(
      `| ${name} | ${n(answer.calls)} | ${tokens(answer)} | ${n(judge.calls)} | ${tokens(judge)} | ${extra} | ${usd(r.costUsd.answer)} | ${usd(r.costUsd.judge)} | ${usd(r.costUsd.total)} |`,
    );
  };
  for (const r of result.results) row(columnName(r), r, `${n(r.memoryReadCalls)} | ${n(r.cut.conversations)} / ${n(r.cut.messages)}`);
  row('**total**', result.total, ' | ');
  return lines;
}

export function formatAnswerAccuracy(result: AnswerAccuracyResult): string {
  const estimated = result.total.usage.answer.estimatedCalls + result.total.usage.judge.estimatedCalls;
  const failed = result.results.reduce((s, r) => s + (r.accuracy.all?.failed ?? 0), 0);
  return [
    '## Answer accuracy',
    '',
    `Answer model \`${result.answerModel}\` (window ${n(result.answerWindow)} tokens), judge \`${result.judgeModel}\`. ` +
      `memfold: its context at the window, with memory_read (at most ${result.maxToolCalls} calls); truncate-oldest: the newest whole messages ` +
      'within the window; full-context: the whole conversation when it fits the answer model, else its newest messages. ' +
      'Share of questions the judge said yes to (correct / asked); abstention questions are right when the answer declines.',
    '',
    ...accuracyTable(result),
    '',
    `Tokens as the endpoint reported them; dollars at memfold's price table (as of ${result.pricesAsOf}), the input it served from its prompt cache at the cached price.` +
      (estimated > 0 ? ` ${n(estimated)} calls reported no usage: counted as chars/4.` : '') +
      (failed > 0 ? ` ${n(failed)} questions had no answer or verdict (the endpoint failed): counted wrong, see results.json.` : ''),
    '',
    ...costTable(result),
  ].join('\n');
}

/** What `memfold help eval` adds: the datasets and formats `eval` reads (pure, so args.ts can show it). */
export const EVAL_HELP = [
  'datasets:',
  '  locomo     the LoCoMo JSON file (locomo10.json)',
  '  tau-bench  a τ-bench trajectory file (tool-pair integrity and value survival)',
  '  swe-agent  a SWE-agent .traj file, or a folder of them (the same figures; the values are those the agent',
  '             passes to a tool after reading them in a tool output)',
  '  jsonl      your own data: <file> holds one turn a line',
  '             {"conversation_id","turn_id","speaker" or "role","text","time"?}',
  '             and --questions one question a line',
  '             {"conversation_id","question","evidence":[turn ids],"answer"?,"category"?,"adversarial"?}',
  "--window N scores one window; --windows a,b,c several (default 4000,8000,16000, the chart's points);",
  '--conversations N only the first N conversations (or runs).',
  "--session-scope none|fixedCount|tokenBudget replays with that session scope (--keep-sessions N: fixedCount's N, default 2);",
  '  LoCoMo turns carry their session (session_N) as sessionId.',
  'writes results.json, report.md and availability.svg to --out (default ./memfold-eval);',
  'the store is fresh (a temporary folder, or --home if new or empty, then kept); tokens are chars/4.',
];

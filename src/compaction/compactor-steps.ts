/**
 * What the compactor's asynchronous entries run (one compaction, re-summarization, the frontier, usage, reconcile),
 * loaded by the first of them (`compactorSteps`): most of the pipeline's modules, which importing memfold or
 * creating a compactor then does not load.
 */
export { compactHistory, failureCodeOf } from './compact-history.js';
export { listFrontier } from './batches/list-frontier.js';
export { resummarizeDepthLocked } from './fold/resummarize-depth.js';
export { contextUsage } from './usage/context-usage.js';
export { checkUsageObservation, observeUsage } from './usage/observe-usage.js';

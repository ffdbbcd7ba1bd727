/** The datasets `memfold eval` replays. Apart from the loaders so that the CLI's flag schema can name them without loading them. */
export const DATASETS = ['locomo', 'longmemeval', 'jsonl', 'tau-bench', 'swe-agent'] as const;
export type DatasetKind = (typeof DATASETS)[number];

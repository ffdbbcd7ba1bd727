// Types of scripts/node22.mjs, for its test.
export interface Planned {
  cache: string;
  nodeDir: string;
  binDir: string;
  spec: string;
}
type Env = Record<string, string | undefined>;
export declare const NODE22_VERSION: string;
export declare const MIN_MAJOR: number;
export declare function cacheDir(options: { env: Env; home: string }): string;
export declare function packageName(options: { platform: string; arch: string }): string | undefined;
export declare function plan(options: { version: string; env: Env; home: string; platform: string; arch: string }): Planned | null;
export declare function npmInstall(options: { spec: string; into: string }): void;
export declare function ensureNode(options: {
  planned: Planned;
  install?: (options: { spec: string; into: string }) => void;
  log?: (line: string) => void;
}): void;
export declare function environment(options: { planned: Planned | null; env: Env }): Env;

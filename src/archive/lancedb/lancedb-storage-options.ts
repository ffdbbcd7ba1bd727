/**
 * memfold's S3 variables as LanceDB storage options, pure. The keys are the ones Lance documents for S3
 * (`aws_endpoint`, `aws_region`, `aws_access_key_id`, `aws_secret_access_key`, `aws_session_token`,
 * `aws_virtual_hosted_style_request`, `allow_http`: lance `docs/src/guide/object_store.md`), spelled in full
 * because Lance adds any `AWS_*` variable of the process it finds unset in the options (`with_env_s3`): a key
 * given here always wins over the process environment.
 */
import { InvalidConfigError } from '../../errors.js';

/** The settings, each with memfold's variable first and the generic ones it falls back to, in order. */
export const S3_VARIABLES = Object.freeze({
  endpoint: ['MEMFOLD_S3_ENDPOINT', 'AWS_ENDPOINT_URL', 'AWS_ENDPOINT'],
  region: ['MEMFOLD_S3_REGION', 'AWS_REGION', 'AWS_DEFAULT_REGION'],
  accessKeyId: ['MEMFOLD_S3_ACCESS_KEY_ID', 'AWS_ACCESS_KEY_ID'],
  secretAccessKey: ['MEMFOLD_S3_SECRET_ACCESS_KEY', 'AWS_SECRET_ACCESS_KEY'],
  sessionToken: ['MEMFOLD_S3_SESSION_TOKEN', 'AWS_SESSION_TOKEN'],
  pathStyle: ['MEMFOLD_S3_PATH_STYLE'],
  allowHttp: ['MEMFOLD_S3_ALLOW_HTTP'],
} as const);

type Setting = keyof typeof S3_VARIABLES;

/**
 * One request to the object store, each attempt: connecting, sending and the whole answer
 * (`MEMFOLD_S3_TIMEOUT_MS`). An endpoint that accepts connections and never answers otherwise holds a call for
 * as long as the client's retries and Lance's throttle retries allow (minutes per request).
 */
export const DEFAULT_S3_TIMEOUT_MS = 10_000;
/** Connecting, within each attempt: an endpoint that is down is known as such in seconds. */
export const S3_CONNECT_TIMEOUT_MS = 5_000;
/**
 * One archive read of an object-store archive (a search, a read by label, a listing) and opening it, all its
 * requests and retries together (`MEMFOLD_S3_DEADLINE_MS`): `archive/archive-deadline.ts`.
 */
export const DEFAULT_S3_DEADLINE_MS = 60_000;

/**
 * The client timeouts of an object-store archive as Lance storage options (`timeout`, `connect_timeout`: object_store
 * `ClientOptions`, durations such as `250ms`), laid under the other options: a key the caller sets wins.
 */
export function objectStoreTimeouts(timeoutMs: number): Record<string, string> {
  return { timeout: `${timeoutMs}ms`, connect_timeout: `${Math.min(S3_CONNECT_TIMEOUT_MS, timeoutMs)}ms` };
}

/**
 * LanceDB commits a version by writing its manifest with a PUT that carries `If-None-Match: *` (Lance
 * `ConditionalPutCommitHandler`, object_store `S3ConditionalPut::ETagMatch`). It is object_store's default;
 * memfold sets it anyway so that an `AWS_CONDITIONAL_PUT=disabled` in the process cannot turn it off.
 */
export const CONDITIONAL_PUT_OPTION = Object.freeze({ aws_conditional_put: 'etag' });

/** `s3://` (conditional PUT commits) or `s3+ddb://` (commits through a DynamoDB table); otherwise undefined. */
export function s3Scheme(uri: string): 's3' | 's3+ddb' | undefined {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(uri)?.[1]?.toLowerCase();
  return scheme === 's3' || scheme === 's3+ddb' ? scheme : undefined;
}

/** A URI LanceDB opens through an object store (`s3://`, `gs://`, `az://`, ...), not a folder. */
export function isObjectStoreUri(uri: string): boolean {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(uri)?.[1]?.toLowerCase();
  return scheme !== undefined && scheme !== 'file';
}

function pick(env: Record<string, string | undefined>, setting: Setting): { name: string; value: string } | undefined {
  for (const name of S3_VARIABLES[setting]) {
    const value = env[name]?.trim();
    if (value) return { name, value };
  }
  return undefined;
}

function flag(found: { name: string; value: string } | undefined): boolean | undefined {
  if (found === undefined) return undefined;
  const value = found.value.toLowerCase();
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new InvalidConfigError(found.name, `must be true or false (got "${found.value}")`);
}

/** The endpoint's URL, refused naming its variable; the value is never echoed (only its scheme), as for DATABASE_URL. */
function endpointUrl(found: { name: string; value: string }): URL {
  let url: URL;
  try {
    url = new URL(found.value);
  } catch {
    throw new InvalidConfigError(found.name, 'must be a URL such as http://127.0.0.1:9000 (the value set does not parse as one)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidConfigError(found.name, `must be an http or https URL (its scheme is "${url.protocol.slice(0, -1)}")`);
  }
  if (url.username || url.password)
    throw new InvalidConfigError(found.name, 'must not hold credentials: set MEMFOLD_S3_ACCESS_KEY_ID and MEMFOLD_S3_SECRET_ACCESS_KEY');
  return url;
}

/**
 * The storage options of an `s3://` or `s3+ddb://` LANCEDB_URI from `env` (blank variables count as unset);
 * for any other URI, none. Errors name the variable and never quote a key, a secret or a token.
 */
export function s3StorageOptionsFromEnv(uri: string, env: Record<string, string | undefined>): Record<string, string> {
  const scheme = s3Scheme(uri);
  if (scheme === undefined) return {};
  const found = Object.fromEntries(Object.keys(S3_VARIABLES).map((setting) => [setting, pick(env, setting as Setting)])) as Record<
    Setting,
    { name: string; value: string } | undefined
  >;
  const options: Record<string, string> = scheme === 's3' ? { ...CONDITIONAL_PUT_OPTION } : {};
  const allowHttp = flag(found.allowHttp);
  const pathStyle = flag(found.pathStyle);
  if (found.endpoint) {
    const url = endpointUrl(found.endpoint);
    if (url.protocol === 'http:' && allowHttp !== true) {
      throw new InvalidConfigError(found.endpoint.name, 'is an http:// URL: set MEMFOLD_S3_ALLOW_HTTP=true to send requests, credentials signed, without TLS');
    }
    // Lance: "you must specify both region and endpoint" for S3-compatible stores; the region is in every signature.
    if (!found.region)
      throw new InvalidConfigError(S3_VARIABLES.region[0], `must be set with ${found.endpoint.name} (most S3-compatible stores accept us-east-1)`);
    options.aws_endpoint = found.endpoint.value;
  }
  if (found.region) options.aws_region = found.region.value;
  if (found.accessKeyId && !found.secretAccessKey) throw new InvalidConfigError(S3_VARIABLES.secretAccessKey[0], `must be set with ${found.accessKeyId.name}`);
  if (found.secretAccessKey && !found.accessKeyId) throw new InvalidConfigError(S3_VARIABLES.accessKeyId[0], `must be set with ${found.secretAccessKey.name}`);
  if (found.sessionToken && !found.accessKeyId) throw new InvalidConfigError(S3_VARIABLES.accessKeyId[0], `must be set with ${found.sessionToken.name}`);
  if (found.accessKeyId && found.secretAccessKey) {
    options.aws_access_key_id = found.accessKeyId.value;
    options.aws_secret_access_key = found.secretAccessKey.value;
  }
  if (found.sessionToken) options.aws_session_token = found.sessionToken.value;
  if (pathStyle !== undefined) options.aws_virtual_hosted_style_request = String(!pathStyle);
  if (allowHttp !== undefined) options.allow_http = String(allowHttp);
  return options;
}

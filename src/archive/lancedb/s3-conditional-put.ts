/**
 * Does an S3-compatible store honour `If-None-Match: *` on PUT? LanceDB commits each table version by
 * creating its manifest with that header (Lance `ConditionalPutCommitHandler`); a store that ignores it lets
 * two writers create the same version, and one commit silently replaces the other (lance-format/lance#4205).
 * Checked once when an `s3://` archive on a custom endpoint opens: a probe object is created twice under the
 * archive's prefix, the second PUT must be refused with 412, then the object is deleted. Requests are signed
 * with AWS Signature Version 4 (node:crypto), so no AWS SDK is needed.
 */
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { MemfoldError } from '../../errors.js';
import { DEFAULT_S3_TIMEOUT_MS } from './lancedb-storage-options.js';

export type ConditionalPutSupport = 'supported' | 'unsupported' | 'unchecked';

export interface ConditionalPutCheckOptions {
  /** Injected for tests. Default the global `fetch`. */
  fetch?: typeof fetch;
  /** Per-request timeout. Default `DEFAULT_S3_TIMEOUT_MS` (10,000 ms). */
  timeoutMs?: number;
  /** Injected for tests. Default now. */
  now?: () => Date;
}

const sha256 = (data: string) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** RFC 3986 encoding of one path segment, as SigV4 wants it (encodeURIComponent leaves !'()* alone). */
const encodeSegment = (segment: string) => encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export interface S3Target {
  url: URL;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** Signature Version 4 headers of one request with an empty body (exported for its test against AWS's example). */
export function signedHeaders(method: string, target: S3Target, extra: Record<string, string>, now: Date): Record<string, string> {
  const amzDate = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const headers: Record<string, string> = {
    host: target.url.host,
    'x-amz-content-sha256': sha256(''),
    'x-amz-date': amzDate,
    ...(target.sessionToken ? { 'x-amz-security-token': target.sessionToken } : {}),
    ...extra,
  };
  const names = Object.keys(headers).sort();
  const canonical = [method, target.url.pathname, '', ...names.map((n) => `${n}:${headers[n]}`), '', names.join(';'), sha256('')].join('\n');
  const scope = `${day}/${target.region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  const key = ['s3', 'aws4_request'].reduce<Buffer>((k, part) => hmac(k, part), hmac(hmac(`AWS4${target.secretAccessKey}`, day), target.region));
  const signature = createHmac('sha256', key).update(toSign).digest('hex');
  const { host: _host, ...sent } = headers;
  return { ...sent, authorization: `AWS4-HMAC-SHA256 Credential=${target.accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}` };
}

/** The probe object's URL: path style unless the options ask for virtual-hosted requests. */
function probeUrl(uri: URL, endpoint: string, virtualHosted: boolean): URL {
  const prefix = uri.pathname.replace(/^\/+|\/+$/g, '');
  const key = [...(prefix ? prefix.split('/') : []), '_memfold_probe', `${randomUUID()}.bin`].map(encodeSegment).join('/');
  const base = new URL(endpoint);
  const root = base.pathname.replace(/\/+$/, '');
  if (virtualHosted) return new URL(`${base.protocol}//${uri.hostname}.${base.host}${root}/${key}`);
  return new URL(`${base.protocol}//${base.host}${root}/${encodeSegment(uri.hostname)}/${key}`);
}

/** The S3 error code of an answer (`<Code>NoSuchBucket</Code>`), never its whole body. */
async function answered(response: Response): Promise<string> {
  const code = /<Code>([^<]{1,64})<\/Code>/.exec(await response.text().catch(() => ''))?.[1];
  return `HTTP ${response.status}${code ? ` ${code}` : ''}`;
}

/**
 * Whether the store of `uri` (an `s3://` URI) refuses a second create of one key. `unchecked` when there is
 * nothing to check or nothing to sign with: no custom endpoint (AWS S3 has honoured the header since August
 * 2024), or no access key in `storageOptions` (credentials from a profile or instance role). An unreachable
 * endpoint, or a first PUT the store refuses, throws `archive_error` naming the endpoint and the answer,
 * never a credential.
 */
export async function checkConditionalPut(
  uri: string,
  storageOptions: Record<string, string>,
  options: ConditionalPutCheckOptions = {},
): Promise<ConditionalPutSupport> {
  const endpoint = storageOptions.aws_endpoint;
  const parsed = new URL(uri);
  if (parsed.protocol !== 's3:' || !endpoint || !storageOptions.aws_access_key_id || !storageOptions.aws_secret_access_key) return 'unchecked';
  const virtualHosted = storageOptions.aws_virtual_hosted_style_request === 'true';
  const target: S3Target = {
    url: probeUrl(parsed, endpoint, virtualHosted),
    region: storageOptions.aws_region ?? 'us-east-1',
    accessKeyId: storageOptions.aws_access_key_id,
    secretAccessKey: storageOptions.aws_secret_access_key,
    ...(storageOptions.aws_session_token ? { sessionToken: storageOptions.aws_session_token } : {}),
  };
  const send = options.fetch ?? fetch;
  const now = options.now ?? (() => new Date());
  const timeoutMs = options.timeoutMs ?? DEFAULT_S3_TIMEOUT_MS;
  const where = `the S3 endpoint ${new URL(endpoint).origin} (bucket ${parsed.hostname})`;
  const request = async (method: 'PUT' | 'DELETE', extra: Record<string, string> = {}) => {
    try {
      return await send(target.url, { method, headers: signedHeaders(method, target, extra, now()), signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      const reason = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
      throw new MemfoldError('archive_error', `LanceDB archive open failed: ${where} could not be reached (${reason})`, { cause: error, retryable: true });
    }
  };
  const first = await request('PUT', { 'if-none-match': '*' });
  if (!first.ok) {
    throw new MemfoldError('archive_error', `LanceDB archive open failed: ${where} refused a PUT under ${parsed.pathname || '/'} (${await answered(first)})`);
  }
  await first.body?.cancel();
  try {
    const second = await request('PUT', { 'if-none-match': '*' });
    // 412 Precondition Failed; AWS answers 409 ConditionalRequestConflict while a competing create is in flight.
    if (second.status === 412 || second.status === 409) {
      await second.body?.cancel();
      return 'supported';
    }
    if (second.ok) {
      await second.body?.cancel();
      return 'unsupported';
    }
    throw new MemfoldError('archive_error', `LanceDB archive open failed: ${where} answered a second conditional PUT with ${await answered(second)}`);
  } finally {
    await request('DELETE')
      .then((response) => response.body?.cancel())
      .catch(() => undefined);
  }
}

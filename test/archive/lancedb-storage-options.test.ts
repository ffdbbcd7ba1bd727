/**
 * The S3 variables as LanceDB storage options (lancedb-storage-options.ts), their place in the runtime
 * configuration, and the Signature V4 of the conditional-PUT check against AWS's documented example.
 */
import { describe, expect, it } from 'vitest';
import { isObjectStoreUri, s3Scheme, s3StorageOptionsFromEnv } from '../../src/archive/lancedb/lancedb-storage-options.js';
import { signedHeaders } from '../../src/archive/lancedb/s3-conditional-put.js';
import { resolveRuntimeConfig } from '../../src/config.js';
import { InvalidConfigError } from '../../src/errors.js';

const LOCAL = {
  MEMFOLD_S3_ENDPOINT: 'http://127.0.0.1:9000',
  MEMFOLD_S3_REGION: 'us-east-1',
  MEMFOLD_S3_ACCESS_KEY_ID: 'AKID',
  MEMFOLD_S3_SECRET_ACCESS_KEY: 'top-secret-value',
  MEMFOLD_S3_ALLOW_HTTP: 'true',
};

function refusal(run: () => unknown): InvalidConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidConfigError);
    return error as InvalidConfigError;
  }
  throw new Error('not refused');
}

describe('s3StorageOptionsFromEnv', () => {
  it("maps memfold's variables to Lance's keys, with conditional PUT commits on", () => {
    expect(s3StorageOptionsFromEnv('s3://bucket/prefix', { ...LOCAL, MEMFOLD_S3_SESSION_TOKEN: 'tok', MEMFOLD_S3_PATH_STYLE: 'false' })).toEqual({
      aws_conditional_put: 'etag',
      aws_endpoint: 'http://127.0.0.1:9000',
      aws_region: 'us-east-1',
      aws_access_key_id: 'AKID',
      aws_secret_access_key: 'top-secret-value',
      aws_session_token: 'tok',
      aws_virtual_hosted_style_request: 'true',
      allow_http: 'true',
    });
  });

  it("falls back to AWS_* names; memfold's own win", () => {
    const env = { AWS_ACCESS_KEY_ID: 'generic', AWS_SECRET_ACCESS_KEY: 'generic-secret', AWS_REGION: 'eu-west-1', MEMFOLD_S3_REGION: 'us-east-2' };
    expect(s3StorageOptionsFromEnv('s3://b/p', env)).toEqual({
      aws_conditional_put: 'etag',
      aws_region: 'us-east-2',
      aws_access_key_id: 'generic',
      aws_secret_access_key: 'generic-secret',
    });
  });

  it('gives an s3+ddb:// URI the same keys without the conditional PUT option, and other URIs none', () => {
    expect(s3StorageOptionsFromEnv('s3+ddb://b/p?ddbTableName=t', { MEMFOLD_S3_REGION: 'us-east-1' })).toEqual({ aws_region: 'us-east-1' });
    expect(s3StorageOptionsFromEnv('gs://b/p', LOCAL)).toEqual({});
    expect(s3StorageOptionsFromEnv('./.memfold/lancedb', LOCAL)).toEqual({});
    expect([s3Scheme('S3://b'), s3Scheme('s3+ddb://b'), s3Scheme('gs://b'), isObjectStoreUri('file:///x'), isObjectStoreUri('az://c/p')]).toEqual([
      's3',
      's3+ddb',
      undefined,
      false,
      true,
    ]);
  });

  it.each([
    [{ ...LOCAL, MEMFOLD_S3_ALLOW_HTTP: undefined }, 'MEMFOLD_S3_ENDPOINT', 'MEMFOLD_S3_ALLOW_HTTP=true'],
    [{ ...LOCAL, MEMFOLD_S3_REGION: undefined }, 'MEMFOLD_S3_REGION', 'must be set with MEMFOLD_S3_ENDPOINT'],
    [{ ...LOCAL, MEMFOLD_S3_SECRET_ACCESS_KEY: undefined }, 'MEMFOLD_S3_SECRET_ACCESS_KEY', 'must be set with MEMFOLD_S3_ACCESS_KEY_ID'],
    [{ ...LOCAL, MEMFOLD_S3_ACCESS_KEY_ID: ' ' }, 'MEMFOLD_S3_ACCESS_KEY_ID', 'must be set with MEMFOLD_S3_SECRET_ACCESS_KEY'],
    [{ ...LOCAL, MEMFOLD_S3_PATH_STYLE: 'maybe' }, 'MEMFOLD_S3_PATH_STYLE', 'must be true or false (got "maybe")'],
    [{ ...LOCAL, MEMFOLD_S3_ENDPOINT: 'ftp://host' }, 'MEMFOLD_S3_ENDPOINT', 'its scheme is "ftp"'],
    [{ ...LOCAL, AWS_ENDPOINT: 'not a url', MEMFOLD_S3_ENDPOINT: undefined }, 'AWS_ENDPOINT', 'does not parse'],
    [{ ...LOCAL, MEMFOLD_S3_ENDPOINT: 'http://user:top-secret-value@host' }, 'MEMFOLD_S3_ENDPOINT', 'must not hold credentials'],
  ])('refuses a bad setting naming the variable, never the secret (%#)', (env, field, rule) => {
    const error = refusal(() => s3StorageOptionsFromEnv('s3://b/p', env));
    expect(error.field).toBe(field);
    expect(error.message).toContain(rule);
    expect(error.message).not.toContain('top-secret-value');
  });
});

describe('resolveRuntimeConfig: lancedbStorageOptions and s3SingleWriter', () => {
  it('sets storage options only for an object-store URI, with overrides laid over the variables', () => {
    expect(resolveRuntimeConfig({}, { ...LOCAL, MEMFOLD_HOME: '/tmp/h' }).lancedbStorageOptions).toBeUndefined();
    const config = resolveRuntimeConfig(
      { lancedbStorageOptions: { aws_region: 'us-west-2', timeout: '60s' }, s3SingleWriter: true },
      { ...LOCAL, LANCEDB_URI: 's3://bucket/prefix' },
    );
    expect(config.lancedbStorageOptions).toMatchObject({ aws_endpoint: 'http://127.0.0.1:9000', aws_region: 'us-west-2', timeout: '60s' });
    expect(config.s3SingleWriter).toBe(true);
    expect(resolveRuntimeConfig({}, { LANCEDB_URI: 's3://b/p', MEMFOLD_S3_SINGLE_WRITER: 'TRUE' }).s3SingleWriter).toBe(true);
  });

  it('bounds every object-store request by MEMFOLD_S3_TIMEOUT_MS (default 10 s, connecting at most 5 s of it), and reads by MEMFOLD_S3_DEADLINE_MS', () => {
    const defaults = resolveRuntimeConfig({}, { LANCEDB_URI: 's3://b/p' });
    expect(defaults.lancedbStorageOptions).toMatchObject({ timeout: '10000ms', connect_timeout: '5000ms' });
    expect(defaults.s3DeadlineMs).toBe(60_000);
    const set = resolveRuntimeConfig({}, { LANCEDB_URI: 'gs://b/p', MEMFOLD_S3_TIMEOUT_MS: '300', MEMFOLD_S3_DEADLINE_MS: '900' });
    expect(set.lancedbStorageOptions).toMatchObject({ timeout: '300ms', connect_timeout: '300ms' });
    expect(set).toMatchObject({ s3TimeoutMs: 300, s3DeadlineMs: 900 });
    // A storage option given in code wins over the setting.
    expect(resolveRuntimeConfig({ lancedbStorageOptions: { timeout: '60s' } }, { LANCEDB_URI: 's3://b/p' }).lancedbStorageOptions?.timeout).toBe('60s');
    expect(resolveRuntimeConfig({}, { MEMFOLD_HOME: '/tmp/h', MEMFOLD_S3_TIMEOUT_MS: '300' }).lancedbStorageOptions).toBeUndefined();
    expect(refusal(() => resolveRuntimeConfig({}, { MEMFOLD_S3_TIMEOUT_MS: '0' })).field).toBe('MEMFOLD_S3_TIMEOUT_MS');
    expect(refusal(() => resolveRuntimeConfig({}, { MEMFOLD_S3_DEADLINE_MS: String(2 ** 31) })).message).toMatch(/from 1 to 2147483647/);
    expect(refusal(() => resolveRuntimeConfig({ s3DeadlineMs: 1.5 })).field).toBe('config.s3DeadlineMs');
  });

  it('refuses a bad override or flag naming it', () => {
    expect(refusal(() => resolveRuntimeConfig({ lancedbStorageOptions: { timeout: 60 } as never })).field).toBe('config.lancedbStorageOptions.timeout');
    expect(refusal(() => resolveRuntimeConfig({}, { MEMFOLD_S3_SINGLE_WRITER: 'yes' })).field).toBe('MEMFOLD_S3_SINGLE_WRITER');
  });
});

describe('signedHeaders (Signature V4)', () => {
  // AWS S3 API reference, "Signature Calculations for the Authorization Header", example GET Object.
  it("reproduces AWS's GET Object example signature", () => {
    const headers = signedHeaders(
      'GET',
      {
        url: new URL('https://examplebucket.s3.amazonaws.com/test.txt'),
        region: 'us-east-1',
        accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
        secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      },
      { range: 'bytes=0-9' },
      new Date('2013-05-24T00:00:00Z'),
    );
    expect(headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    );
  });
});

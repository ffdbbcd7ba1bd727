/**
 * A local S3-compatible server for tests: s3rver (a devDependency) on 127.0.0.1 and a free port, its files in a
 * temporary folder, one bucket made before it listens. s3rver knows one key pair (S3RVER / S3RVER) and refuses
 * another access key id (403 InvalidAccessKeyId); it does not verify V4 signatures, so a wrong secret passes.
 *
 * s3rver ignores `If-None-Match` on PUT, as some stores do, and LanceDB commits with it. `conditionalPut: true`
 * adds it here: a create-only PUT of a key that exists is answered 412, the check and the write held under one
 * lock per key, so two writers cannot both create a version. Without it, the server is the unsafe store.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The few members of s3rver used here. */
interface S3rverInstance {
  configureBuckets(): Promise<unknown>;
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  store: { existsObject(bucket: string, key: string): Promise<boolean> };
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;

export const S3RVER_KEYS = Object.freeze({ accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' });

export interface LocalS3 {
  endpoint: string;
  bucket: string;
  /** Create-only PUTs this server refused because the key existed (conditional mode only). */
  refusedCreates(): number;
  /** From now on accept every request and never answer it (a hung endpoint); `close` ends them. */
  stall(): void;
  close(): Promise<void>;
}

export async function startLocalS3(options: { bucket?: string; conditionalPut?: boolean } = {}): Promise<LocalS3> {
  const bucket = options.bucket ?? 'memfold-test';
  const directory = await mkdtemp(path.join(tmpdir(), 'memfold-s3-'));
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverClass;
  const s3rver = new S3rver({ silent: true, directory, configureBuckets: [{ name: bucket }] });
  await s3rver.configureBuckets();
  const handle = s3rver.callback();
  const locks = new Map<string, Promise<void>>();
  let refused = 0;

  const conditional = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const [name, ...rest] = url.pathname.slice(1).split('/');
    const key = rest.map(decodeURIComponent).join('/');
    const id = `${name}/${key}`;
    const previous = locks.get(id) ?? Promise.resolve();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const mine = previous.then(() => held);
    locks.set(id, mine);
    await previous;
    try {
      if (await s3rver.store.existsObject(decodeURIComponent(name!), key)) {
        refused++;
        req.resume();
        res.writeHead(412, { 'content-type': 'application/xml' });
        res.end(
          '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>',
        );
        return;
      }
      const done = new Promise<void>((resolve) => res.once('close', resolve));
      handle(req, res);
      await done;
    } finally {
      release();
      if (locks.get(id) === mine) locks.delete(id);
    }
  };

  let stalled = false;
  const server = createServer((req, res) => {
    if (stalled) return;
    const createOnly = req.method === 'PUT' && req.headers['if-none-match'] === '*' && !req.url?.includes('uploadId=');
    if (options.conditionalPut && createOnly) void conditional(req, res);
    else handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    refusedCreates: () => refused,
    stall: () => {
      stalled = true;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(directory, { recursive: true, force: true });
    },
  };
}

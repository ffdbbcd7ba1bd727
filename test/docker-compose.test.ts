/**
 * docker-compose.yml is for users (no Docker engine runs here): it must parse and name what the
 * README tells them to start.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { documentationText } from './support/docs-text.js';

const root = new URL('../', import.meta.url);

describe('docker-compose.yml', () => {
  it('starts PostgreSQL 16 with a volume and a health check, and a model server under a profile, as the README says', async () => {
    const compose = parse(await readFile(new URL('docker-compose.yml', root), 'utf8')) as {
      services: Record<
        string,
        { image: string; volumes?: string[]; healthcheck?: { test: string[] }; profiles?: string[]; ports?: string[]; environment?: Record<string, string> }
      >;
      volumes: Record<string, unknown>;
    };
    const readme = documentationText();
    const postgres = compose.services.postgres!;
    expect(postgres.image).toBe('postgres:16');
    expect(postgres.healthcheck?.test.join(' ')).toContain('pg_isready');
    const volume = postgres.volumes![0]!.split(':')[0]!;
    expect(Object.keys(compose.volumes)).toContain(volume);
    const env = postgres.environment!;
    expect(readme).toContain(`DATABASE_URL=postgres://${env.POSTGRES_USER}:${env.POSTGRES_PASSWORD}@127.0.0.1:5432/${env.POSTGRES_DB}`);
    expect(readme).toContain(`volume \`${volume}\``);

    const model = compose.services.ollama!;
    expect(model.profiles).toEqual(['model']);
    expect(readme).toContain('docker compose --profile model up -d ollama');
    const port = model.ports![0]!.split(':').at(-1);
    expect(readme).toContain(`OPENAI_BASE_URL=http://127.0.0.1:${port}/v1`);
  });

  it('the README gives the test command that .ci/run runs', async () => {
    const readme = await readFile(new URL('README.md', root), 'utf8');
    const ci = await readFile(new URL('.ci/run', root), 'utf8');
    expect(readme.split('\n').slice(0, 40).join('\n')).toMatch(/npm install && npm run demo[\s\S]*npm test/);
    expect(ci.trim().split('\n').at(-1)).toBe('npm test');
  });
});

import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { entropy, findSecrets, findSecretsInBinary, secretsInLine } from '../../../src/core/guard/secrets.js';

const patch = (file: string, ...lines: string[]) =>
  `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n@@ -1 +1 @@\n${lines.map((l) => `+${l}`).join('\n')}\n`;

describe('secret-shaped content', () => {
  it.each([
    ['-----BEGIN RSA PRIVATE KEY-----', 'private key'],
    ['-----BEGIN OPENSSH PRIVATE KEY-----', 'private key'],
    ['-----BEGIN PGP PRIVATE KEY BLOCK-----', 'private key'],
    ['url = "postgres://u:pass@host/db"', 'credentials in a URL'],
    ['DATABASE_URL=postgres://u:pass@host/db', 'credentials in a URL'],
    ['https://deploy:s3cr3tT0ken@git.example.com/repo.git', 'credentials in a URL'],
    [`const k = "AKIA${'ABCDEFGHIJKLMNOP'}";`, 'AWS access key id'],
    [`token: ghp_${'a1B2'.repeat(9)}`, 'GitHub token'],
    [`github_pat_${'11ABCDEFG0'.repeat(4)}`, 'GitHub token'],
    ['SLACK=xoxb-1234567890-abcdefghij', 'Slack token'],
    [`sk-ant-api03-${'Ab9_'.repeat(10)}`, 'Anthropic API key'],
    [`OPENAI="sk-proj-${'aB3dE5fG7h'.repeat(4)}"`, 'OpenAI API key'],
    [`key: AIza${'SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q'.slice(0, 35)}`, 'Google API key'],
    [
      'auth = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"',
      'JSON web token',
    ],
    ['alice:$6$Zk3pQ9x1$Jq8vZbXH1u0wq7Yt2mB5e8rK4cN6sD3f:19000:0:99999:7:::', 'line copied from /etc/shadow'],
    ['root:*:19000:0:99999:7:::', 'line copied from /etc/shadow'],
    ['STRIPE_SECRET_KEY=f8Kq2LxP9vN4tR7wZ3mB', 'high-entropy value assigned to STRIPE_SECRET_KEY'],
    ['const apiToken = "a8f5f167f44f4964e6c998dee827110c";', 'high-entropy value assigned to apiToken'],
    ['DB_PASSWORD: "Tr0ub4dor&3x"', 'high-entropy value assigned to DB_PASSWORD'],
  ])('finds %s', (line, kind) => {
    expect(secretsInLine(line)).toContain(kind);
  });

  it.each([
    'API_KEY=xxx',
    'API_KEY=changeme',
    'const key = process.env.API_KEY;',
    'apiKey: process.env.ANTHROPIC_API_KEY,',
    'TOKEN=${GITHUB_TOKEN}',
    'password = "password"',
    'url: postgres://user:${PASSWORD}@localhost/db',
    'url: postgres://localhost:5432/db',
    'https://example.com/path?x=1',
    'const sortKey = "createdAtTimestamp";',
    'primaryKey: id',
    'const token = nextToken;',
    'passwd = getpass()',
    'timestamp: 12:30:45',
    'import assert from "node:assert/strict";',
    'sha512-Jf8SLfo4qrvQwXcXJqVvnx7lZ6gk8Pu3vYOh1IqvZ0oIiLJg2QS6W3Ft+0sq1mGvGeV8sFmrw8WmS3oY5mBGpw==',
  ])('leaves %s alone', (line) => {
    expect(secretsInLine(line)).toEqual([]);
    expect(findSecrets(patch('src/x.ts', line))).toEqual([]);
  });

  it('decodes base64, inline or wrapped over lines as `base64` prints it', () => {
    const key = `-----BEGIN OPENSSH PRIVATE KEY-----\n${'b3BlbnNzaC1rZXktdjEAAAAABG5vbmU'.repeat(3)}\n-----END OPENSSH PRIVATE KEY-----\n`;
    const wrapped = Buffer.from(key)
      .toString('base64')
      .match(/.{1,76}/g)!;
    expect(findSecrets(patch('data.b64', ...wrapped))).toEqual([
      'guard: data.b64: secret-shaped content added (base64 blob decoding to a private key)',
    ]);
    const inline = `const blob = "${Buffer.from('DATABASE_URL=postgres://admin:hunter22@db.internal/prod').toString('base64')}";`;
    expect(findSecrets(patch('cfg.js', inline))).toEqual([
      'guard: cfg.js: secret-shaped content added (base64 blob decoding to a credentials in a URL)',
    ]);
    const shadow = Buffer.from('root:$6$abcdefgh$0123456789abcdefABCDEF:19000:0:99999:7:::\n').toString('base64');
    expect(findSecrets(patch('x.txt', shadow)).join()).toMatch(/decoding to a line copied from \/etc\/shadow/);
    // base64 of ordinary text or of binary data is not a secret
    expect(
      findSecrets(
        patch(
          'img.js',
          `const png = "${Buffer.from('just a long and harmless sentence, nothing to see here').toString('base64')}";`,
        ),
      ),
    ).toEqual([]);
  });

  it('finds runs of /etc/passwd lines, not one passwd-looking line', () => {
    const passwd = [
      'root:x:0:0:root:/root:/bin/bash',
      'daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin',
      'bin:x:2:2:bin:/bin:/usr/sbin/nologin',
    ];
    expect(findSecrets(patch('users.txt', ...passwd)).join()).toMatch(/lines copied from \/etc\/passwd/);
    expect(findSecrets(patch('users.txt', passwd[0]!))).toEqual([]);
  });

  it('looks only at added lines, and exempts files the task names', () => {
    const diff =
      'diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-DATABASE_URL=postgres://u:pass@host/db\n+DATABASE_URL=postgres://localhost/db\n';
    expect(findSecrets(diff)).toEqual([]);
    const added = patch('fixtures/keys.pem', '-----BEGIN EC PRIVATE KEY-----');
    expect(findSecrets(added)).toHaveLength(1);
    expect(findSecrets(added, (p) => p.startsWith('fixtures/'))).toEqual([]);
  });

  it('reads the printable runs of a binary file, and finds nothing in random bytes', () => {
    const tar = `leak.tar\0\0\0-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\0\0`;
    expect(findSecretsInBinary('leak.tar', tar)).toEqual([
      'guard: leak.tar: secret-shaped content added (private key, in a binary file)',
    ]);
    expect(findSecretsInBinary('noise.bin', randomBytes(200_000).toString('latin1'))).toEqual([]);
  });

  it('measures entropy in bits per character', () => {
    expect(entropy('aaaa')).toBe(0);
    expect(entropy('abcd')).toBe(2);
  });
});

describe('hostile lines', () => {
  it('reads a 300 KB word in linear time, and still finds the secret after it', () => {
    // Quadratic matching took minutes on such a line; vitest's timeout fails it long before.
    const line = `${'x'.repeat(300_000)} API_KEY="q8Zr2LmX4vTn9WpK3sYd"`;
    expect(secretsInLine(line).length).toBeGreaterThan(0);
    expect(secretsInLine('x'.repeat(300_000))).toEqual([]);
  });
});

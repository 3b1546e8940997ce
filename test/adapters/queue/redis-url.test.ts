import { describe, expect, it } from 'vitest';
import { parseQueueUrl } from '../../../src/adapters/queue/redis-url.js';

describe('parseQueueUrl', () => {
  it('reads host, port, database and name, and never shows the password', () => {
    const a = parseQueueUrl('redis://:s3cret@10.0.0.5:6380/3?name=night');
    expect(a).toMatchObject({ host: '10.0.0.5', port: 6380, db: 3, password: 's3cret', name: 'night', tls: false });
    expect(a.display).toBe('redis://10.0.0.5:6380/3?name=night');
    expect(parseQueueUrl('rediss://cache.internal')).toMatchObject({ port: 6379, db: 0, tls: true, name: 'loopfleet' });
  });

  it.each([
    ['http://127.0.0.1:6379', /scheme must be redis/],
    ['redis://127.0.0.1:6379/x', /database number/],
    ['not a url', /is not a URL/],
    ['redis://127.0.0.1:6379?queue=a', /unknown parameter 'queue'/],
    ['redis://127.0.0.1:6379?name=a:b', /name 'a:b'/],
  ])('refuses %s with a message naming the option', (text, why) => {
    expect(() => parseQueueUrl(text)).toThrow(why);
    expect(() => parseQueueUrl(text)).toThrow(/^--queue: /);
  });
});

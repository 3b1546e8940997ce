import { describe, expect, it } from 'vitest';
import { originOf, userinfoOf, withoutUserinfo } from '../../src/domain/remote-url.js';

describe('a remote URL as it may leave the process', () => {
  it('loses the user information of an http(s) URL, and only the password of another scheme', () => {
    expect(withoutUserinfo('https://gitlab-ci-token:glcbt-64_abc@gitlab.example.com/g/p.git')).toBe(
      'https://gitlab.example.com/g/p.git',
    );
    expect(withoutUserinfo('HTTP://x-access-token:ghs_1@127.0.0.1:8080/o/r')).toBe('HTTP://127.0.0.1:8080/o/r');
    expect(withoutUserinfo('https://oauth2@host/o/r')).toBe('https://host/o/r');
    expect(withoutUserinfo('ssh://git:hunter2@host:22/o/r')).toBe('ssh://git@host:22/o/r');
    expect(withoutUserinfo('ssh://git@host/o/r')).toBe('ssh://git@host/o/r');
    expect(withoutUserinfo('git@github.com:o/r.git')).toBe('git@github.com:o/r.git');
    expect(withoutUserinfo('/srv/git/r.git')).toBe('/srv/git/r.git');
    // an @ in the path is no user information
    expect(withoutUserinfo('https://host/o/r@2')).toBe('https://host/o/r@2');
  });

  it('reads the user and password an http(s) URL carries, decoded; none without a password', () => {
    expect(userinfoOf('https://gitlab-ci-token:a%40b@host/g/p.git')).toEqual({
      user: 'gitlab-ci-token',
      password: 'a@b',
    });
    expect(userinfoOf('https://oauth2@host/g/p.git')).toBeNull();
    expect(userinfoOf('ssh://git:pw@host/g/p.git')).toBeNull();
    expect(userinfoOf('https://host/g/p.git')).toBeNull();
  });

  it('names the origin a header is scoped to: scheme, host and a port that is not the default', () => {
    expect(originOf('https://u:p@GitHub.com/o/r.git')).toBe('https://github.com/');
    expect(originOf('https://127.0.0.1:8443/o/r.git')).toBe('https://127.0.0.1:8443/');
    expect(originOf('https://host:443/o/r')).toBe('https://host/');
    expect(originOf('git@host:o/r')).toBeNull();
    expect(originOf('/srv/r.git')).toBeNull();
  });
});

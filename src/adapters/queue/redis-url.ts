/**
 * `--queue redis://[[USER]:PASSWORD@]HOST[:PORT][/DB][?name=NAME]` (or `rediss://` for TLS): where the
 * attempt queue lives. NAME (default `loopfleet`) keeps two fleets on one Redis apart: every key of the
 * queue starts with `lf:<NAME>:`.
 *
 * Invariant: the password never leaves this module except inside the connection options; `display` is
 * what may be printed.
 */
import { UsageError } from '../../domain/errors.js';

export interface QueueAddress {
  host: string;
  port: number;
  db: number;
  username?: string;
  password?: string;
  tls: boolean;
  /** the fleet's name on this Redis */
  name: string;
  /** the URL without its credentials */
  display: string;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function parseQueueUrl(text: string, option = '--queue'): QueueAddress {
  const bad = (why: string) =>
    new UsageError(`${option}: ${why} (expected redis://HOST:PORT[/DB], e.g. redis://127.0.0.1:6379/0)`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw bad(`'${text.replace(/\/\/[^@/]*@/, '//…@')}' is not a URL`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    throw bad(`the scheme must be redis: or rediss:, not ${url.protocol}`);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '') throw bad('the URL names no host');
  const port = url.port === '' ? 6379 : Number(url.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw bad(`port ${url.port} is out of range`);
  const path = url.pathname.replace(/^\//, '');
  if (path !== '' && !/^\d{1,5}$/.test(path)) throw bad(`the path must be a database number, not '/${path}'`);
  const db = path === '' ? 0 : Number(path);
  for (const key of url.searchParams.keys())
    if (key !== 'name') throw bad(`unknown parameter '${key}' (only name=NAME)`);
  const name = url.searchParams.get('name') ?? 'loopfleet';
  if (!NAME.test(name)) throw bad(`name '${name}' must be 1 to 64 letters, digits, '-' or '_'`);
  const address: QueueAddress = { host, port, db, tls: url.protocol === 'rediss:', name, display: '' };
  if (url.username !== '') address.username = decodeURIComponent(url.username);
  if (url.password !== '') address.password = decodeURIComponent(url.password);
  const hostPart = host.includes(':') ? `[${host}]` : host;
  address.display = `${url.protocol}//${hostPart}:${port}/${db}${name === 'loopfleet' ? '' : `?name=${name}`}`;
  return address;
}

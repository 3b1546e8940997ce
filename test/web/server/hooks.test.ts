import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrackerChange } from '../../../src/core/tracker/webhook-change.js';
import { startWebServer, type WebServer } from '../../../src/web/server/app.js';
import { FakeFleet, fakeTasks } from '../../helpers/fake-fleet.js';
import { call } from '../../helpers/serve-client.js';

/**
 * The tracker's webhooks on the serve command's server: believed on their signature alone (a forge cannot
 * carry the page's token), refused without it, heard once per delivery id, absent without a tracker.
 */

const SECRET = 'webhook-secret-of-the-test';
const TOKEN = 'hooks-test-token-0123456789abcdef';
const LABELED = JSON.stringify({
  action: 'labeled',
  issue: { number: 7, labels: [{ name: 'loopfleet' }] },
  label: { name: 'loopfleet' },
  sender: { login: 'octo' },
});

const heard: TrackerChange[] = [];
const refused: string[] = [];
let withTracker: WebServer;
let without: WebServer;

function serve(webhooks: boolean): Promise<WebServer> {
  return startWebServer({
    fleet: new FakeFleet({ tasks: fakeTasks(2) }),
    token: TOKEN,
    readOnly: true,
    host: '127.0.0.1',
    port: 0,
    assets: {},
    latestReport: async () => null,
    onError: (error) => {
      throw error;
    },
    webhooks: webhooks
      ? {
          secret: SECRET,
          hear: async (change) => {
            heard.push(change);
          },
          refused: (forge, status, reason) => refused.push(`${forge} ${status} ${reason}`),
        }
      : null,
  });
}

function deliver(server: WebServer, forge: string, body: string, headers: Record<string, string>) {
  return fetch(`http://127.0.0.1:${server.port}/hooks/${forge}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body,
  });
}

const signed = (body: string, secret = SECRET) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

beforeAll(async () => {
  withTracker = await serve(true);
  without = await serve(false);
});

afterAll(async () => {
  await withTracker.close();
  await without.close();
});

describe('POST /hooks/github and /hooks/gitlab', () => {
  it('refuses a missing or wrong signature with 401 and hears nothing, without needing the token', async () => {
    const none = await deliver(withTracker, 'github', LABELED, { 'X-GitHub-Event': 'issues' });
    expect(none.status).toBe(401);
    const wrong = await deliver(withTracker, 'github', LABELED, {
      'X-GitHub-Event': 'issues',
      'X-Hub-Signature-256': signed(LABELED, 'not-the-secret'),
    });
    expect(wrong.status).toBe(401);
    // A body changed after signing does not verify either.
    const changed = await deliver(withTracker, 'github', LABELED.replace('7', '8'), {
      'X-GitHub-Event': 'issues',
      'X-Hub-Signature-256': signed(LABELED),
    });
    expect(changed.status).toBe(401);
    const gitlab = await deliver(withTracker, 'gitlab', '{}', {
      'X-Gitlab-Token': 'guess',
      'X-Gitlab-Event': 'Issue Hook',
    });
    expect(gitlab.status).toBe(401);
    expect(heard).toEqual([]);
    expect(refused).toHaveLength(4);
  });

  it('hears a signed delivery once: the same delivery id again changes nothing', async () => {
    const headers = {
      'X-GitHub-Event': 'issues',
      'X-GitHub-Delivery': 'delivery-1',
      'X-Hub-Signature-256': signed(LABELED),
    };
    const first = await deliver(withTracker, 'github', LABELED, headers);
    expect(first.status).toBe(202);
    expect(heard).toEqual([expect.objectContaining({ kind: 'issue', forge: 'github', action: 'labeled', issue: 7 })]);
    const again = await deliver(withTracker, 'github', LABELED, headers);
    expect(again.status).toBe(202);
    expect(await again.json()).toMatchObject({ accepted: false });
    expect(heard).toHaveLength(1);
  });

  it('answers 404 when the backlog names no tracker, signed or not', async () => {
    const reply = await deliver(without, 'github', LABELED, {
      'X-GitHub-Event': 'issues',
      'X-Hub-Signature-256': signed(LABELED),
    });
    expect(reply.status).toBe(404);
    expect(((await reply.json()) as { error: string }).error).toMatch(/no `tracker:` setting/);
  });

  it('keeps the Host check: a rebinding Host is refused before any signature is read', async () => {
    const reply = await call(
      withTracker.port,
      'POST',
      '/hooks/github',
      {
        host: 'evil.example',
        'content-type': 'application/json',
        'x-hub-signature-256': signed(LABELED),
        'x-github-event': 'issues',
      },
      LABELED,
    );
    expect(reply.status).toBe(403);
    expect(heard).toHaveLength(1);
  });
});

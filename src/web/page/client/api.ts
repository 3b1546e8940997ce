/**
 * The page's calls to the API it is served with: the same routes any client
 * uses, no private back door. Reads carry the session cookie; an action is a POST with a JSON body and the
 * `X-Loopfleet-Token` header (the CSRF token `GET /api/session` gives), so no other origin can make one.
 * A refusal rejects with the server's own `{error}` words.
 */
export const API_JS = String.raw`
let csrfToken = null;

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function answer(res) {
  const type = res.headers.get('content-type') || '';
  const body = type.includes('application/json') ? await res.json() : await res.text();
  if (!res.ok) {
    const words = body && typeof body === 'object' && typeof body.error === 'string' ? body.error : res.status + ' ' + res.statusText;
    throw new ApiError(res.status, words);
  }
  return body;
}

export async function get(path) {
  return answer(await fetch(path, { credentials: 'same-origin', headers: { accept: 'application/json' } }));
}

export async function session() {
  const s = await get('/api/session');
  csrfToken = typeof s.csrfToken === 'string' ? s.csrfToken : null;
  return s;
}

export async function post(path, body) {
  const headers = { 'content-type': 'application/json', accept: 'application/json' };
  if (csrfToken !== null) headers['X-Loopfleet-Token'] = csrfToken;
  return answer(
    await fetch(path, { method: 'POST', credentials: 'same-origin', headers, body: JSON.stringify(body ?? {}) }),
  );
}

/** A task's id as one path segment. */
export function taskPath(id, rest) {
  return '/api/tasks/' + encodeURIComponent(id) + (rest ? '/' + rest : '');
}
`;

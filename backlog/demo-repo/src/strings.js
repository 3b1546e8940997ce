/** Small string helpers. Some are still missing: see BACKLOG.md. */

export function reverse(text) {
  return [...text].reverse().join('');
}

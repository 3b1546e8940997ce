/**
 * The page `loopfleet serve` hands out: path → content type and body. The server serves exactly these
 * paths (`/` and `/assets/*`), behind the token like every other request; nothing else is read from disk.
 */
export const PAGE_ASSETS: Record<string, { type: string; body: string }> = {
  '/': {
    type: 'text/html; charset=utf-8',
    body: '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>loopfleet</title></head><body><main id="app">loopfleet</main><script src="/assets/app.js"></script></body></html>\n',
  },
  '/assets/app.js': { type: 'text/javascript; charset=utf-8', body: '' },
};

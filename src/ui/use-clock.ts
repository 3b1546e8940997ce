import { useEffect, useState } from 'react';

/**
 * The current time, refreshed every `intervalMs` while `ticking` (something is running and shows a live
 * elapsed time); frozen otherwise so an idle fleet causes no renders.
 */
export function useClock(ticking: boolean, intervalMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!ticking) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [ticking, intervalMs]);
  return now;
}

import { useEffect, useMemo, useRef } from 'react';

export interface ThrottledQueue<T> {
  push(item: T): void;
  /** deliver everything queued now */
  flush(): void;
}

/**
 * A queue delivered in batches, at most once per `intervalMs`. The first item after a quiet spell is
 * delivered on the next macrotask (never synchronously inside the caller, e.g. inside an engine's `emit`);
 * items arriving within the interval after a delivery wait for the next one. Items keep their order.
 * Nothing is delivered after unmount.
 */
export function useThrottledQueue<T>(deliver: (items: T[]) => void, intervalMs: number): ThrottledQueue<T> {
  const deliverRef = useRef(deliver);
  deliverRef.current = deliver;
  const queue = useMemo(() => createThrottledQueue<T>((items) => deliverRef.current(items), intervalMs), [intervalMs]);
  useEffect(() => {
    queue.reopen();
    return () => queue.dispose();
  }, [queue]);
  return queue;
}

export function createThrottledQueue<T>(
  deliver: (items: T[]) => void,
  intervalMs: number,
  now: () => number = () => performance.now(),
): ThrottledQueue<T> & { dispose(): void; reopen(): void } {
  let items: T[] = [];
  let timer: ReturnType<typeof setTimeout> | null = null;
  let lastDelivery = -Infinity;
  let disposed = false;

  const flush = (): void => {
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    if (disposed || items.length === 0) return;
    const batch = items;
    items = [];
    lastDelivery = now();
    deliver(batch);
  };

  return {
    push(item: T): void {
      if (disposed) return;
      items.push(item);
      if (timer !== null) return;
      const wait = Math.max(0, lastDelivery + intervalMs - now());
      timer = setTimeout(flush, wait);
    },
    flush,
    /** accept items again after `dispose` (an effect that is set up twice) */
    reopen(): void {
      disposed = false;
    },
    dispose(): void {
      disposed = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      items = [];
    },
  };
}

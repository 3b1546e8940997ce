import { useCallback, useMemo, useState } from 'react';

export interface Selection {
  /** the selected task id; null only when there are no tasks */
  readonly id: string | null;
  /** its row in `order`, -1 when there are no tasks */
  readonly index: number;
  moveBy(delta: number): void;
  moveTo(index: number): void;
}

interface Selected {
  id: string | null;
  /** where the selection was last seen, to land next to it if its task disappears */
  index: number;
}

/**
 * Selection by task id. Invariant: while the selected task is in `order` it stays selected, wherever its
 * row moves and whatever its status does. If it disappears, the task now at its old row (or the last one)
 * is selected. With no selection yet, the first task is.
 */
export function useSelection(order: readonly string[]): Selection {
  const [selected, setSelected] = useState<Selected>({ id: order[0] ?? null, index: 0 });
  const indexOf = useMemo(() => new Map(order.map((id, i) => [id, i])), [order]);

  let index = selected.id === null ? -1 : (indexOf.get(selected.id) ?? -1);
  let id = selected.id;
  if (index === -1 && order.length > 0) {
    index = Math.min(Math.max(0, selected.index), order.length - 1);
    id = order[index] ?? null;
  } else if (order.length === 0) {
    id = null;
  }
  // Store the fallback, so a later change to `order` does not move the selection again.
  if (id !== selected.id || (index !== -1 && index !== selected.index)) {
    setSelected({ id, index: Math.max(0, index) });
  }

  const moveTo = useCallback(
    (target: number) => {
      if (order.length === 0) return;
      const i = Math.min(Math.max(0, target), order.length - 1);
      setSelected({ id: order[i] ?? null, index: i });
    },
    [order],
  );
  const moveBy = useCallback((delta: number) => moveTo(Math.max(0, index) + delta), [moveTo, index]);

  return { id, index, moveBy, moveTo };
}

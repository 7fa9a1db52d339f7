/**
 * The *Fix with Logician* button's pure part: which `%logician fix` cell a cell's error asks
 * for. The kernel's `fix` explains the most recent error; an older cell's error is named in
 * the fix's note, so the agent looks at that one instead. Owns no DOM and no kernel.
 */

/** What the fix needs to know of one cell of the notebook, in notebook order. */
export interface CellErrorInfo {
  /** The cell's id in the notebook model. */
  id: string;
  /** Its execution count, null when it has none (never run, or run and cleared). */
  executionCount: number | null;
  /** Whether its outputs hold an error (a traceback). */
  hasError: boolean;
}

/** The line a fix cell starts with. */
export const FIX_COMMAND = '%logician fix';

/** The index of the cell whose error ran last (the highest execution count among the cells
 * with an error; the lowest index among those without a count), or -1 when none has one. */
export function newestErrorIndex(cells: readonly CellErrorInfo[]): number {
  let best = -1;
  for (let i = 0; i < cells.length; i++) {
    const cell = cells[i];
    if (!cell.hasError) {
      continue;
    }
    if (best === -1 || (cell.executionCount ?? -1) > (cells[best].executionCount ?? -1)) {
      best = i;
    }
  }
  return best;
}

/** The source of the cell that fixes the error of `cells[index]`: `%logician fix` when it is
 * the newest error (the kernel's own), else with a note naming the older cell by its prompt
 * and id, so the agent reads that cell rather than the newest error. */
export function fixCellSource(cells: readonly CellErrorInfo[], index: number): string {
  const target = cells[index];
  if (!target || index === newestErrorIndex(cells)) {
    return FIX_COMMAND;
  }
  const where = target.executionCount !== null ? `In [${target.executionCount}]` : 'the cell';
  return `${FIX_COMMAND} I mean the error of ${where} (cell id ${target.id}), not the newest one: read that cell and fix it`;
}

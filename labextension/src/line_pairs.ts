/**
 * The side-by-side line diff, pure: a line diff's ops laid out as rows of two panes (before |
 * after), shared lines facing each other, a run of removed lines facing the run of added
 * lines that replaced it (paired line by line as changed), the rest facing a blank.
 *
 * Owns: the row layout of the two-pane view. Must never: touch the DOM or the kernel.
 */
import type { LineOp } from './csv_diff';

/** One pane's line in a row: its 0-based index in that side, and its text. */
export interface IPaneLine {
  n: number;
  text: string;
}

/** A row of the two panes: `same` (both sides hold the line), `changed` (a removed line faces
 * the added one that took its place), `del` (before only), `add` (after only). */
export interface IPairedRow {
  kind: 'same' | 'changed' | 'del' | 'add';
  left: IPaneLine | null;
  right: IPaneLine | null;
}

/** Two-pane rows from a line diff's ops (`lineDiff`), in order; both sides' lines appear once
 * each, in their own order. */
export function pairLines(ops: LineOp[]): IPairedRow[] {
  const rows: IPairedRow[] = [];
  for (let i = 0; i < ops.length; ) {
    const op = ops[i];
    if (op.kind === 'same') {
      rows.push({ kind: 'same', left: { n: op.a!, text: op.text }, right: { n: op.b!, text: op.text } });
      i++;
      continue;
    }
    // a run of changes, however its adds and dels interleave: dels face adds in order
    const dels: IPaneLine[] = [];
    const adds: IPaneLine[] = [];
    while (i < ops.length && ops[i].kind !== 'same') {
      const o = ops[i];
      if (o.kind === 'del') {
        dels.push({ n: o.a!, text: o.text });
      } else {
        adds.push({ n: o.b!, text: o.text });
      }
      i++;
    }
    for (let p = 0; p < Math.max(dels.length, adds.length); p++) {
      const left = dels[p] ?? null;
      const right = adds[p] ?? null;
      rows.push({ kind: left && right ? 'changed' : left ? 'del' : 'add', left, right });
    }
  }
  return rows;
}

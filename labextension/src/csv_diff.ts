/**
 * Pure helpers of the diff view: a line diff (Myers) and a CSV/TSV table diff built on it.
 *
 * Owns: turning two sides' text into what the view draws (lines kept, added, removed; rows
 * added, removed or changed with their changed cells; columns added or removed).
 * Must never: touch the DOM or the kernel.
 */

export type LineOp = { kind: 'same' | 'add' | 'del'; text: string; a?: number; b?: number };

/** The lines of `text` without their line ends ('' has none). */
export function splitLines(text: string): string[] {
  if (text === '') {
    return [];
  }
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') {
    lines.pop();
  }
  return lines;
}

/** A shortest edit script from `a` to `b` (Myers' O(ND) diff); `a`/`b` in an op are
 * 0-based indices into the inputs. */
export function lineDiff(a: string[], b: string[]): LineOp[] {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const v = new Map<number, number>([[1, 0]]);
  const trace: Map<number, number>[] = [];
  let found = false;
  for (let d = 0; d <= max && !found; d++) {
    trace.push(new Map(v));
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && (v.get(k - 1) ?? -1) < (v.get(k + 1) ?? -1));
      let x = down ? (v.get(k + 1) ?? 0) : (v.get(k - 1) ?? 0) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v.set(k, x);
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
  }
  // walk back through the trace
  const ops: LineOp[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const vd = trace[d];
    const k = x - y;
    const down = k === -d || (k !== d && (vd.get(k - 1) ?? -1) < (vd.get(k + 1) ?? -1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = vd.get(prevK) ?? 0;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      x--;
      y--;
      ops.push({ kind: 'same', text: a[x], a: x, b: y });
    }
    if (d > 0) {
      if (down) {
        y--;
        ops.push({ kind: 'add', text: b[y], b: y });
      } else {
        x--;
        ops.push({ kind: 'del', text: a[x], a: x });
      }
    }
  }
  return ops.reverse();
}

/** The rows of CSV (or TSV, `delimiter` '\t') text: quoted fields, doubled quotes, and line
 * ends inside quotes kept. */
export function parseCsv(text: string, delimiter = ','): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c === '"' && field === '') {
      quoted = true;
    } else if (c === delimiter) {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') {
        i++;
      }
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else {
      field += c;
    }
  }
  if (field !== '' || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

export type ColumnStatus = 'same' | 'added' | 'removed';
export interface ITableColumn {
  name: string;
  status: ColumnStatus;
  /** Index in the before / after header (-1: not there). */
  before: number;
  after: number;
}
export interface ITableCell {
  value: string;
  /** The value before, when the cell changed. */
  was?: string;
  changed: boolean;
}
export interface ITableRow {
  status: 'same' | 'added' | 'removed' | 'changed';
  cells: ITableCell[];
}
export interface ITableDiff {
  columns: ITableColumn[];
  rows: ITableRow[];
  added: number;
  removed: number;
  changed: number;
}

/** The columns of both headers, matched by name: the after order, with removed columns
 * placed where they stood before. */
function columns(before: string[], after: string[]): ITableColumn[] {
  const out: ITableColumn[] = after.map((name, i) => {
    const j = before.indexOf(name);
    return { name, status: j < 0 ? 'added' : 'same', before: j, after: i };
  });
  before.forEach((name, j) => {
    if (!after.includes(name)) {
      out.splice(Math.min(j, out.length), 0, { name, status: 'removed', before: j, after: -1 });
    }
  });
  return out;
}

/** Two CSV texts as a table diff: the first row is the header; rows aligned by a line diff
 * of their cells in the shared columns, a run of removed rows facing a run of added ones
 * paired as changed rows (their differing cells marked). */
export function csvTableDiff(beforeText: string, afterText: string, delimiter = ','): ITableDiff {
  const a = parseCsv(beforeText, delimiter);
  const b = parseCsv(afterText, delimiter);
  const cols = columns(a[0] ?? [], b[0] ?? []);
  const shared = cols.filter(c => c.status === 'same');
  const key = (row: string[], side: 'before' | 'after') =>
    JSON.stringify(shared.map(c => row[c[side]] ?? ''));
  const ops = lineDiff(
    a.slice(1).map(r => key(r, 'before')),
    b.slice(1).map(r => key(r, 'after'))
  );
  const cellsOf = (before: string[] | null, after: string[] | null): ITableCell[] =>
    cols.map(c => {
      const was = before && c.before >= 0 ? (before[c.before] ?? '') : undefined;
      const now = after && c.after >= 0 ? (after[c.after] ?? '') : undefined;
      if (before && after && c.status === 'same' && was !== now) {
        return { value: now ?? '', was, changed: true };
      }
      return { value: now ?? was ?? '', changed: false };
    });
  const diff: ITableDiff = { columns: cols, rows: [], added: 0, removed: 0, changed: 0 };
  for (let i = 0; i < ops.length; ) {
    const op = ops[i];
    if (op.kind === 'same') {
      diff.rows.push({ status: 'same', cells: cellsOf(a[op.a! + 1], b[op.b! + 1]) });
      i++;
      continue;
    }
    const dels: number[] = [];
    const adds: number[] = [];
    while (i < ops.length && ops[i].kind !== 'same') {
      if (ops[i].kind === 'del') {
        dels.push(ops[i].a!);
      } else {
        adds.push(ops[i].b!);
      }
      i++;
    }
    const paired = Math.min(dels.length, adds.length);
    for (let p = 0; p < paired; p++) {
      diff.rows.push({ status: 'changed', cells: cellsOf(a[dels[p] + 1], b[adds[p] + 1]) });
      diff.changed++;
    }
    for (const d of dels.slice(paired)) {
      diff.rows.push({ status: 'removed', cells: cellsOf(a[d + 1], null) });
      diff.removed++;
    }
    for (const d of adds.slice(paired)) {
      diff.rows.push({ status: 'added', cells: cellsOf(null, b[d + 1]) });
      diff.added++;
    }
  }
  return diff;
}

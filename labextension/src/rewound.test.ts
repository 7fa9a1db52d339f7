import { describe, expect, it } from 'vitest';

import { localTime } from './format';
import type { IFrameRow } from './protocol';
import { RewoundCells } from './rewound';

const AT = new Date(2020, 0, 5, 9, 7, 3).toISOString();

const row = (frame: number, cell_id: string | null, status: IFrameRow['status'], over: Partial<IFrameRow> = {}): IFrameRow => ({
  frame,
  execution_count: frame,
  cell_id,
  code: `print(${frame})`,
  time: '2020-01-05T08:00:00Z',
  outcome: status === 'open' ? null : 'ok',
  status,
  rewound_at: status === 'rewound' ? AT : null,
  rewound_by: status === 'rewound' ? 9 : null,
  files: 0,
  input_tokens: 0,
  output_tokens: 0,
  ...over
});

describe('RewoundCells.resetFromRows', () => {
  it('greys a cell whose newest frame was rewound', () => {
    const cells = new RewoundCells();
    cells.resetFromRows([row(4, 'a', 'rewound'), row(2, 'a', 'active')]);
    expect(cells.size).toBe(1);
    expect(cells.mark('a')).toEqual({ at: AT, by: 9 });
    const tip = cells.tooltip('a')!;
    expect(tip).toContain(localTime(AT));
    expect(tip).not.toContain('ledger entry');
  });

  it('keeps a cell rerun after a rewind live, in whatever order the rows come', () => {
    const rows = [row(3, 'a', 'rewound'), row(5, 'a', 'active'), row(1, 'a', 'rewound')];
    for (const order of [rows, [...rows].reverse(), [rows[1], rows[0], rows[2]]]) {
      const cells = new RewoundCells();
      cells.resetFromRows(order);
      expect(cells.mark('a')).toBeUndefined();
      expect(cells.tooltip('a')).toBeUndefined();
      expect(cells.size).toBe(0);
    }
  });

  it('decides each cell on its own', () => {
    const cells = new RewoundCells();
    cells.resetFromRows([
      row(6, 'b', 'open'),
      row(5, 'c', 'rewound', { rewound_by: 11 }),
      row(4, 'b', 'rewound'),
      row(3, 'a', 'active'),
      row(2, 'c', 'active')
    ]);
    expect(cells.mark('a')).toBeUndefined();
    expect(cells.mark('b')).toBeUndefined();
    expect(cells.mark('c')).toEqual({ at: AT, by: 11 });
    expect(cells.size).toBe(1);
  });

  it('ignores frames that belong to no cell', () => {
    const cells = new RewoundCells();
    cells.resetFromRows([row(2, null, 'rewound'), row(3, '', 'rewound'), row(1, 'a', 'active')]);
    expect(cells.size).toBe(0);
    expect(cells.mark('')).toBeUndefined();
    // a cell-less newer frame does not hide a cell's own rewound frame
    cells.resetFromRows([row(9, null, 'active'), row(4, 'a', 'rewound')]);
    expect(cells.mark('a')).toBeDefined();
  });

  it('forgets earlier marks when rebuilt', () => {
    const cells = new RewoundCells();
    cells.rewound(['x'], [3], AT, 1);
    cells.resetFromRows([row(1, 'a', 'rewound')]);
    expect(cells.mark('x')).toBeUndefined();
    expect(cells.mark('a')).toBeDefined();
    cells.resetFromRows([]);
    expect(cells.size).toBe(0);
  });

  it('copes with a rewound row that lacks when and by', () => {
    const cells = new RewoundCells();
    cells.resetFromRows([row(1, 'a', 'rewound', { rewound_at: undefined, rewound_by: undefined })]);
    expect(cells.mark('a')).toEqual({ at: null, by: null });
    expect(cells.tooltip('a')).toContain('an earlier time');
  });
});

describe('RewoundCells.rewound', () => {
  it('greys the cells of a rewind, naming the frame it went back to', () => {
    const cells = new RewoundCells();
    cells.rewound(['a', 'b'], [7, 5, 6], AT, 12);
    expect(cells.size).toBe(2);
    expect(cells.mark('a')).toEqual({ at: AT, by: 12, toFrame: 5 });
    for (const id of ['a', 'b']) {
      const tip = cells.tooltip(id)!;
      expect(tip).not.toMatch(/ledger entry|frame \d/);
      expect(tip).toContain(localTime(AT));
    }
    expect(cells.tooltip('c')).toBeUndefined();
  });

  it('updates a cell greyed before to the later rewind', () => {
    const cells = new RewoundCells();
    cells.resetFromRows([row(8, 'a', 'rewound')]);
    cells.rewound(['a'], [3, 4], AT, 20);
    expect(cells.size).toBe(1);
    expect(cells.mark('a')).toEqual({ at: AT, by: 20, toFrame: 3 });
  });

  it('still words a rewind that names no frames', () => {
    const cells = new RewoundCells();
    cells.rewound(['a'], [], AT, 2);
    expect(cells.mark('a')?.toFrame).toBeUndefined();
    expect(cells.tooltip('a')).toContain('Rewound at');
    expect(cells.tooltip('a')).not.toContain('undefined');
  });
});

describe('RewoundCells.ran', () => {
  it('makes a greyed cell live again', () => {
    const cells = new RewoundCells();
    cells.rewound(['a', 'b'], [2], AT, 1);
    cells.ran('a');
    expect(cells.mark('a')).toBeUndefined();
    expect(cells.tooltip('a')).toBeUndefined();
    expect(cells.mark('b')).toBeDefined();
    expect(cells.size).toBe(1);
    cells.ran('never-greyed');
    expect(cells.size).toBe(1);
  });
});

describe('RewoundCells.undone', () => {
  it('makes the cells of the undone rewind live again, not those of another rewind', () => {
    const cells = new RewoundCells();
    cells.rewound(['a'], [3], AT, 9);
    cells.rewound(['b'], [5], AT, 12);
    cells.undone(['a', 'b'], 9);
    expect(cells.mark('a')).toBeUndefined();
    expect(cells.mark('b')).toEqual({ at: AT, by: 12, toFrame: 5 });
  });
});

import { describe, expect, it } from 'vitest';

import { fixCellSource, newestErrorIndex } from './fix';
import type { CellErrorInfo } from './fix';

const cell = (id: string, executionCount: number | null, hasError: boolean): CellErrorInfo => ({
  id,
  executionCount,
  hasError
});

describe('newestErrorIndex', () => {
  it('is the error cell that ran last, wherever it sits in the notebook', () => {
    const cells = [cell('a', 7, true), cell('b', 3, true), cell('c', 9, false)];
    expect(newestErrorIndex(cells)).toBe(0);
  });

  it('is -1 when no cell shows an error', () => {
    expect(newestErrorIndex([cell('a', 1, false), cell('b', null, false)])).toBe(-1);
    expect(newestErrorIndex([])).toBe(-1);
  });

  it('prefers a counted error over one without a count', () => {
    expect(newestErrorIndex([cell('a', null, true), cell('b', 2, true)])).toBe(1);
  });
});

describe('fixCellSource', () => {
  it('is plain %logician fix for the newest error: the one the kernel fixes', () => {
    const cells = [cell('a', 3, true), cell('b', 5, true)];
    expect(fixCellSource(cells, 1)).toBe('%logician fix');
  });

  it('names an older error by its prompt and id, so the agent fixes that one', () => {
    const cells = [cell('a', 3, true), cell('b', 5, true)];
    const source = fixCellSource(cells, 0);
    expect(source.startsWith('%logician fix ')).toBe(true);
    expect(source).toContain('In [3]');
    expect(source).toContain('cell id a');
    expect(source).not.toContain('\n'); // one line: the magic's note
  });

  it('names an older error without a count by its id alone', () => {
    const cells = [cell('old', null, true), cell('b', 5, true)];
    expect(fixCellSource(cells, 0)).toContain('the cell (cell id old)');
  });
});

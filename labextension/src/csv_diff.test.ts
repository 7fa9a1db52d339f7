import { describe, expect, it } from 'vitest';

import { csvTableDiff, lineDiff, parseCsv, splitLines } from './csv_diff';

describe('lineDiff', () => {
  it('keeps shared lines and marks what was added and removed', () => {
    const ops = lineDiff(splitLines('a\nb\nc\n'), splitLines('a\nB\nc\nd\n'));
    expect(ops.map(o => `${o.kind}:${o.text}`)).toEqual(['same:a', 'del:b', 'add:B', 'same:c', 'add:d']);
  });

  it('handles empty sides', () => {
    expect(lineDiff([], ['x']).map(o => o.kind)).toEqual(['add']);
    expect(lineDiff(['x'], []).map(o => o.kind)).toEqual(['del']);
    expect(lineDiff([], [])).toEqual([]);
  });

  it('rebuilds both sides from its ops', () => {
    const a = splitLines('1\n2\n3\n4\n5\n6\n');
    const b = splitLines('0\n2\n3\n5\n6\n7\n');
    const ops = lineDiff(a, b);
    expect(ops.filter(o => o.kind !== 'add').map(o => o.text)).toEqual(a);
    expect(ops.filter(o => o.kind !== 'del').map(o => o.text)).toEqual(b);
  });
});

describe('csvTableDiff', () => {
  it('parses quoted fields', () => {
    expect(parseCsv('a,"b,c","say ""hi"""\n1,2,3\n')).toEqual([
      ['a', 'b,c', 'say "hi"'],
      ['1', '2', '3']
    ]);
  });

  it('marks the changed cell of a changed row, and added and removed rows', () => {
    const diff = csvTableDiff('name,qty\napple,3\npear,5\nplum,1\n', 'name,qty\napple,3\npear,7\nfig,2\n');
    expect(diff.rows.map(r => r.status)).toEqual(['same', 'changed', 'changed']);
    const pear = diff.rows[1].cells;
    expect(pear[0]).toEqual({ value: 'pear', changed: false });
    expect(pear[1]).toEqual({ value: '7', was: '5', changed: true });
    expect(diff.changed).toBe(2);

    const grown = csvTableDiff('a,b\n1,2\n', 'a,b\n1,2\n3,4\n');
    expect(grown.rows.map(r => r.status)).toEqual(['same', 'added']);
    expect(grown.added).toBe(1);
    const shrunk = csvTableDiff('a,b\n1,2\n3,4\n', 'a,b\n3,4\n');
    expect(shrunk.rows.map(r => r.status)).toEqual(['removed', 'same']);
  });

  it('shows columns added and removed', () => {
    const diff = csvTableDiff('a,b,c\n1,2,3\n', 'a,c,d\n1,3,4\n');
    expect(diff.columns.map(c => `${c.name}:${c.status}`)).toEqual(['a:same', 'b:removed', 'c:same', 'd:added']);
    expect(diff.rows[0].status).toBe('same');
    expect(diff.rows[0].cells.map(c => c.value)).toEqual(['1', '2', '3', '4']);
  });

  it('reads TSV', () => {
    const diff = csvTableDiff('a\tb\n1\t2\n', 'a\tb\n1\t9\n', '\t');
    expect(diff.rows[0].cells[1]).toEqual({ value: '9', was: '2', changed: true });
  });
});

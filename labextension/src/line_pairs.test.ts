import { describe, expect, it } from 'vitest';

import { lineDiff, splitLines } from './csv_diff';
import { pairLines } from './line_pairs';

const rows = (before: string, after: string) =>
  pairLines(lineDiff(splitLines(before), splitLines(after))).map(
    r => `${r.kind}:${r.left ? `${r.left.n + 1} ${r.left.text}` : '-'}|${r.right ? `${r.right.n + 1} ${r.right.text}` : '-'}`
  );

describe('pairLines', () => {
  it('faces a changed line with the line that replaced it', () => {
    expect(rows('def f():\n    return 1\n', 'def f():\n    return 2\n')).toEqual([
      'same:1 def f():|1 def f():',
      'changed:2     return 1|2     return 2'
    ]);
  });

  it('pairs a run line by line and leaves the longer side facing blanks', () => {
    expect(rows('a\nx\ny\nz\nb\n', 'a\nX\nb\nc\n')).toEqual([
      'same:1 a|1 a',
      'changed:2 x|2 X',
      'del:3 y|-',
      'del:4 z|-',
      'same:5 b|3 b',
      'add:-|4 c'
    ]);
  });

  it('keeps shared lines aligned after lines inserted on one side', () => {
    const out = rows('1\n2\n3\n', '0\n0\n1\n2\n3\n');
    expect(out).toEqual(['add:-|1 0', 'add:-|2 0', 'same:1 1|3 1', 'same:2 2|4 2', 'same:3 3|5 3']);
  });

  it('lists every line of both sides once, in order', () => {
    const a = splitLines('1\n2\n3\n4\n5\n6\n7\n');
    const b = splitLines('0\n2\n3\n5\n6x\n7\n8\n9\n');
    const paired = pairLines(lineDiff(a, b));
    expect(paired.filter(r => r.left).map(r => r.left!.text)).toEqual(a);
    expect(paired.filter(r => r.right).map(r => r.right!.text)).toEqual(b);
    expect(paired.every(r => r.kind !== 'same' || r.left!.text === r.right!.text)).toBe(true);
  });

  it('handles empty sides', () => {
    expect(rows('', '')).toEqual([]);
    expect(rows('', 'x\n')).toEqual(['add:-|1 x']);
    expect(rows('x\n', '')).toEqual(['del:1 x|-']);
  });
});

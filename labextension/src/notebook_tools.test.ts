import { describe, expect, it } from 'vitest';

import { answerRequest, IDocCell, INotebookDoc, summary } from './notebook_tools';

/** A notebook in memory, as the shared model behaves for these answers. */
function memoryDoc(cells: IDocCell[]): INotebookDoc & { shape(): string[] } {
  let next = 0;
  return {
    path: 'nb.ipynb',
    cells: () => cells.map(c => ({ ...c })),
    insert: (index, cell) => {
      const id = cell.id ?? `new${++next}`;
      cells.splice(index, 0, { id, cell_type: cell.cell_type, source: cell.source, outputs: [] });
      return id;
    },
    remove: index => void cells.splice(index, 1),
    setSource: (index, source) => {
      cells[index].source = source;
    },
    transact: change => change(),
    run: () => undefined,
    shape: () => cells.map(c => `${c.id}:${c.cell_type}:${c.source}`)
  };
}

const start = (): IDocCell[] => [
  { id: 'a', cell_type: 'markdown', source: '# Title' },
  { id: 'b', cell_type: 'code', source: 'x = 1\ny = 2', execution_count: 3, outputs: [{ output_type: 'stream', text: 'hi' }] },
  { id: 'c', cell_type: 'code', source: 'print(3)' }
];

describe('answerRequest', () => {
  it('outlines every cell with its id, head of source and output kinds', () => {
    const reply = answerRequest(memoryDoc(start()), 'outline', { head_chars: 3 });
    expect(reply.cells?.map(c => [c.index, c.id, c.source, c.lines])).toEqual([
      [0, 'a', '# T', 1],
      [1, 'b', 'x =', 2],
      [2, 'c', 'pri', 1]
    ]);
    expect(reply.cells?.[1].output_kinds).toEqual(['stream']);
  });

  it('edits by id and a restore of the inverse steps gives the notebook back exactly', () => {
    const doc = memoryDoc(start());
    const before = doc.shape();
    const replaced = answerRequest(doc, 'edit', { mode: 'replace', cell_id: 'b', source: 'x = 10', cell_type: 'markdown' });
    expect(replaced.before?.source).toBe('x = 1\ny = 2');
    expect(replaced.after).toMatchObject({ id: 'b', index: 1, cell_type: 'markdown', source: 'x = 10' });
    const inserted = answerRequest(doc, 'edit', { mode: 'insert', after_id: 'a', source: 'new' });
    expect(inserted.after).toMatchObject({ index: 1, cell_type: 'code' });
    const deleted = answerRequest(doc, 'edit', { mode: 'delete', cell_id: 'c' });
    expect(deleted.before).toMatchObject({ id: 'c', index: 3 });
    const steps = [
      { op: 'insert', id: 'c', index: 3, source: 'print(3)', cell_type: 'code' },
      { op: 'delete', id: inserted.after?.id, expect: 'new' },
      { op: 'replace', id: 'b', expect: 'x = 10', source: 'x = 1\ny = 2', cell_type: 'code' }
    ];
    const done = answerRequest(doc, 'restore', { steps, force: false });
    expect(done).toMatchObject({ applied: ['c', inserted.after?.id, 'b'], conflicts: [], missing: [] });
    expect(doc.shape()).toEqual(before);
  });

  it('leaves a cell the user changed since as a conflict, unless forced', () => {
    const doc = memoryDoc(start());
    const step = { op: 'replace', id: 'b', expect: 'what the agent wrote', source: 'old', cell_type: 'code' };
    expect(answerRequest(doc, 'restore', { steps: [step], force: false })).toMatchObject({ conflicts: ['b'] });
    expect(doc.cells()[1].source).toBe('x = 1\ny = 2');
    expect(answerRequest(doc, 'restore', { steps: [step], force: true })).toMatchObject({ applied: ['b'] });
    expect(doc.cells()[1].source).toBe('old');
    expect(answerRequest(doc, 'restore', { steps: [{ op: 'delete', id: 'zz', expect: '' }] })).toMatchObject({
      missing: ['zz']
    });
  });

  it('answers an unknown id with an error and changes nothing', () => {
    const doc = memoryDoc(start());
    const reply = answerRequest(doc, 'edit', { mode: 'delete', cell_id: 'gone' });
    expect(reply.error).toContain('"gone"');
    expect(doc.shape()).toEqual(memoryDoc(start()).shape());
  });
});

describe('summary', () => {
  it('bounds a flood of text to its head and tail and images to their size', () => {
    const out = summary({ output_type: 'stream', text: 'A'.repeat(50_000_000) + 'END' }, 1000);
    expect(String(out.text).length).toBeLessThan(1100);
    expect(String(out.text).endsWith('END')).toBe(true);
    expect(out.cut).toBe(50_000_003 - 1000);
    const image = summary({ output_type: 'display_data', data: { 'image/png': 'A'.repeat(4000), 'text/plain': '<Figure>' } }, 1000);
    expect(image).toMatchObject({ sizes: { 'image/png': 3000, 'text/plain': 8 }, text: '<Figure>' });
  });
});

describe('run', () => {
  it('executes the cells still holding what the agent left, in order, and names the others', () => {
    const doc = memoryDoc(start());
    const ran: string[][] = [];
    doc.run = ids => void ran.push(ids);
    const reply = answerRequest(doc, 'run', {
      cells: [
        { id: 'c', expect: 'print(3)' },
        { id: 'b', expect: 'x = 1' },
        { id: 'gone', expect: 'x' },
        { id: 'a', expect: '# Title' }
      ]
    });
    expect(ran).toEqual([['c']]);
    expect(reply.applied).toEqual(['c']);
    expect(reply.conflicts).toEqual(['b', 'a']); // edited since; markdown never runs
    expect(reply.missing).toEqual(['gone']);
  });
});

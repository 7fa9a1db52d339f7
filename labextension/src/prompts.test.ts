import { describe, expect, it } from 'vitest';

import { agentCellSource, PromptHistory } from './prompts';

describe('agentCellSource', () => {
  it('makes a %%logician cell of the prompt, lines kept, trailing blanks dropped', () => {
    expect(agentCellSource('Plot data.csv\nby month\n\n')).toBe('%%logician\nPlot data.csv\nby month');
  });
});

describe('PromptHistory', () => {
  it('walks back from the newest with up, forward with down, and gives the draft back', () => {
    const h = new PromptHistory();
    h.add('first');
    h.add('second');
    expect(h.up('half-typed')).toBe('second');
    expect(h.up('second')).toBe('first');
    expect(h.up('first')).toBeNull(); // the oldest
    expect(h.down()).toBe('second');
    expect(h.down()).toBe('half-typed');
    expect(h.down()).toBeNull();
  });

  it('keeps no blank prompt and no repeat in a row, and stays bounded', () => {
    const h = new PromptHistory(3);
    for (const p of ['a', 'a', '  ', 'b', 'c', 'd']) {
      h.add(p);
    }
    expect(h.items).toEqual(['d', 'c', 'b']);
  });

  it('starts the walk again from the newest after a prompt runs', () => {
    const h = new PromptHistory();
    h.add('one');
    h.add('two');
    h.up('');
    h.up('');
    h.add('three');
    expect(h.up('')).toBe('three');
  });
});

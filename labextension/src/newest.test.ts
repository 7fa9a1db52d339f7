import { describe, expect, it } from 'vitest';

import { Newest } from './newest';

/** A view that asks for a path and draws the answer, as the diff view does. */
function view() {
  const newest = new Newest();
  const shown: string[] = [];
  const answers = new Map<string, (text: string) => void>();
  return {
    shown,
    async show(path: string): Promise<void> {
      const current = newest.ask();
      const text = await new Promise<string>(resolve => answers.set(path, resolve));
      if (current()) {
        shown.push(text);
      }
    },
    answer(path: string, text: string): void {
      answers.get(path)?.(text);
    }
  };
}

describe('Newest', () => {
  it('draws the file chosen last when the earlier answer arrives after it', async () => {
    const v = view();
    const first = v.show('analysis.ipynb'); // asked by the view itself: a slow notebook diff
    const chosen = v.show('sales.csv'); // the user's click, answered first
    v.answer('sales.csv', 'csv diff');
    await chosen;
    v.answer('analysis.ipynb', 'notebook diff');
    await first;
    expect(v.shown).toEqual(['csv diff']);
  });

  it('draws every answer that arrives in order of asking', async () => {
    const v = view();
    const one = v.show('a.txt');
    v.answer('a.txt', 'a');
    await one;
    const two = v.show('b.txt');
    v.answer('b.txt', 'b');
    await two;
    expect(v.shown).toEqual(['a', 'b']);
  });
});

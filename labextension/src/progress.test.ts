import { describe, expect, it } from 'vitest';

import { progressFraction, progressText, statusBarText } from './format';
import type { IStatus } from './protocol';

describe('restore progress', () => {
  it('says how many files of how many, with thousands separators', () => {
    expect(progressText({ operation: 'rewind', done: 12400, total: 20000, finished: false })).toBe(
      'Rewinding: restoring 12,400 / 20,000 files'
    );
    expect(progressText({ operation: 'undo', done: 0, total: 1, finished: false })).toBe(
      'Undoing the rewind: restoring 0 / 1 file'
    );
    expect(progressText({ operation: 'resume', done: 3, total: 7, finished: false })).toBe(
      'Resuming the rewind: restoring 3 / 7 files'
    );
  });

  it('says no count when there are no files (a conversation-only rewind)', () => {
    expect(progressText({ operation: 'rewind', done: 0, total: 0, finished: false })).toBe('Rewinding…');
    expect(progressFraction({ operation: 'rewind', done: 0, total: 0, finished: false })).toBe(0);
  });

  it('gives the fraction done, never above 1', () => {
    expect(progressFraction({ operation: 'rewind', done: 12400, total: 20000, finished: false })).toBeCloseTo(0.62);
    expect(progressFraction({ operation: 'rewind', done: 9, total: 3, finished: false })).toBe(1);
  });

  it('names the rewinding phase in the status bar', () => {
    const status: IStatus = { thread: 't', phase: 'rewinding', model: 'm', frames: 1, input_tokens: 0, output_tokens: 0 };
    expect(statusBarText(status)).toBe('Logician: rewinding');
  });
});

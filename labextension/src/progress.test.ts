import { describe, expect, it } from 'vitest';

import { lastActive, progressFraction, progressText, statusBarText, undoRefused } from './format';
import type { IFrameRow, IStatus } from './protocol';

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

  it('says the first snapshot scans, with the share done', () => {
    expect(progressText({ operation: 'first_snapshot', done: 12400, total: 60000, finished: false })).toBe(
      'First snapshot: scanning 12,400 / 60,000 files (20%)'
    );
  });

  it('says a later full scan reads the cell\'s files, not a first snapshot', () => {
    expect(progressText({ operation: 'capture', done: 5000, total: 20000, finished: false })).toBe(
      "Capturing the cell's files: scanning 5,000 / 20,000 files (25%)"
    );
  });

  it('says which big file is captured after the cell, in MB', () => {
    expect(
      progressText({ operation: 'large_capture', done: 120e6, total: 300e6, finished: false, path: 'data/big.bin' })
    ).toBe('Large file: capturing big.bin 120 / 300 MB');
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

describe('undo rewind', () => {
  const base: IStatus = { thread: 't', phase: 'idle', model: 'm', frames: 1, input_tokens: 0, output_tokens: 0 };
  it('is off with the kernel’s reason when there is nothing to undo', () => {
    expect(undoRefused({ ...base, undo_refused: 'Nothing to undo: the last rewind was already undone' })).toBe(
      'Nothing to undo: the last rewind was already undone'
    );
  });
  it('is on when the kernel has a rewind to undo, or does not say (an older kernel)', () => {
    expect(undoRefused({ ...base, undo_refused: null })).toBeNull();
    expect(undoRefused(base)).toBeNull();
  });
});

describe('rewind the last cell', () => {
  const row = (frame: number, status: IFrameRow['status']): IFrameRow => ({
    frame,
    execution_count: frame,
    cell_id: null,
    code: '',
    time: '',
    outcome: 'ok',
    status,
    files: 0,
    input_tokens: 0,
    output_tokens: 0
  });
  it('picks the newest frame still active, past rewound and running ones', () => {
    expect(lastActive([row(9, 'open'), row(8, 'rewound'), row(7, 'active'), row(6, 'active')])?.frame).toBe(7);
    expect(lastActive([row(2, 'rewound')])).toBeUndefined();
  });
});

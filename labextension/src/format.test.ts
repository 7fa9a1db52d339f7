import { afterEach, describe, expect, it, vi } from 'vitest';

import {
  auditWarning,
  budgetText,
  codeLabel,
  compactCount,
  evictedTooltip,
  formatCost,
  frameAriaLabel,
  frameCell,
  frameFiles,
  frameOutcome,
  frameTokens,
  localTime,
  keptMessage,
  noticeWhere,
  previewLines,
  resumeTooltip,
  rewoundTooltip,
  statusBarText
} from './format';
import type { IFrameRow, INotice, IPreview, IStatus } from './protocol';

const status = (over: Partial<IStatus> = {}): IStatus => ({
  thread: 't1',
  phase: 'idle',
  model: 'claude',
  frames: 0,
  input_tokens: 0,
  output_tokens: 0,
  ...over
});

const row = (over: Partial<IFrameRow> = {}): IFrameRow => ({
  frame: 1,
  execution_count: 1,
  cell_id: 'c1',
  code: 'x = 1',
  time: '2024-11-29T14:03:09Z',
  outcome: 'ok',
  status: 'active',
  files: 0,
  input_tokens: 0,
  output_tokens: 0,
  ...over
});

const preview = (over: Partial<IPreview> = {}): IPreview => ({
  frame: 2,
  frames: [2],
  files: [],
  skipped: [],
  conflicts: [],
  messages_dropped: 0,
  ...over
});

/** An ISO string for a local wall-clock time (so tests do not depend on the time zone). */
const iso = (y: number, mo: number, d: number, h: number, mi: number, s: number) =>
  new Date(y, mo - 1, d, h, mi, s).toISOString();

describe('compactCount', () => {
  it('shows counts below a thousand as they are', () => {
    expect(compactCount(0)).toBe('0');
    expect(compactCount(7)).toBe('7');
    expect(compactCount(999)).toBe('999');
  });

  it('shows thousands with one decimal below ten thousand', () => {
    expect(compactCount(1000)).toBe('1.0k');
    expect(compactCount(1234)).toBe('1.2k');
    expect(compactCount(9949)).toBe('9.9k');
  });

  it('shows whole thousands from ten thousand', () => {
    expect(compactCount(10_000)).toBe('10k');
    expect(compactCount(12_345)).toBe('12k');
    expect(compactCount(999_499)).toBe('999k');
  });

  it('shows millions with one decimal', () => {
    expect(compactCount(1_000_000)).toBe('1.0M');
    expect(compactCount(1_234_567)).toBe('1.2M');
    expect(compactCount(25_000_000)).toBe('25.0M');
  });
});

describe('formatCost', () => {
  it('is empty when the cost is unknown', () => {
    expect(formatCost(null)).toBe('');
    expect(formatCost(undefined)).toBe('');
  });

  it('shows a tiny cost with four decimals, so it does not read as $0.00', () => {
    expect(formatCost(0.0042)).toBe('$0.0042');
    expect(formatCost(0.00005)).toBe('$0.0001');
  });

  it('shows other costs in cents', () => {
    expect(formatCost(0)).toBe('$0.00');
    expect(formatCost(0.01)).toBe('$0.01');
    expect(formatCost(1.234)).toBe('$1.23');
    expect(formatCost(12)).toBe('$12.00');
  });
});

describe('localTime', () => {
  const now = new Date(2024, 10, 29, 23, 30, 0);

  it('shows only the clock for a time of the same day', () => {
    expect(localTime(iso(2024, 11, 29, 14, 3, 9), now)).toBe('14:03:09');
    expect(localTime(iso(2024, 11, 29, 0, 0, 1), now)).toBe('00:00:01');
  });

  it('shows month, day and minutes for another day', () => {
    expect(localTime(iso(2024, 11, 28, 14, 3, 9), now)).toBe('Nov 28 14:03');
    expect(localTime(iso(2024, 1, 5, 9, 7, 59), now)).toBe('Jan 5 09:07');
  });

  it('does not take the same day of another year for today', () => {
    expect(localTime(iso(2023, 11, 29, 14, 3, 9), now)).toBe('Nov 29 14:03');
  });

  it('returns an unparsable time as it is', () => {
    expect(localTime('not a time', now)).toBe('not a time');
    expect(localTime('2024-13-45T99:00:00Z', now)).toBe('2024-13-45T99:00:00Z');
  });

  it('is empty for no time', () => {
    expect(localTime('', now)).toBe('');
    expect(localTime(null, now)).toBe('');
    expect(localTime(undefined, now)).toBe('');
  });
});

describe('auditWarning', () => {
  it('is empty for an intact log, a missing field and no status', () => {
    expect(auditWarning(null)).toBe('');
    expect(auditWarning(status())).toBe('');
    expect(auditWarning(status({ audit_problems: 0 }))).toBe('');
  });

  it('counts the damaged records and names the command that lists them', () => {
    expect(auditWarning(status({ audit_problems: 1 }))).toBe(
      '1 audit record damaged or unchecked: run %logician audit'
    );
    expect(auditWarning(status({ audit_problems: 3 }))).toContain('3 audit records');
  });

  it('is flagged in the status bar too', () => {
    expect(statusBarText(status({ audit_problems: 2 }))).toBe('Logician: idle · ⚠ audit log damaged');
    expect(statusBarText(status())).not.toContain('audit');
  });
});

describe('notices', () => {
  const notice = (over: Partial<INotice> = {}): INotice => ({
    id: 1,
    text: 'Logician: frame 3: 1 variable(s) not captured',
    time: '2024-11-29T14:03:09+00:00',
    frame: 3,
    execution_count: 5,
    cell_id: 'c',
    critical: false,
    read: false,
    ...over
  });
  const sameDay = new Date('2024-11-29T18:00:00+00:00');

  it('counts the unread ones in the status bar, and says nothing when all are read', () => {
    expect(statusBarText(status({ unread_notices: 2 }))).toBe('Logician: idle · 2 notices');
    expect(statusBarText(status({ unread_notices: 1 }))).toBe('Logician: idle · 1 notice');
    expect(statusBarText(status({ unread_notices: 0 }))).toBe('Logician: idle');
  });

  it('says where each was said: the frame, the cell and the time', () => {
    const time = localTime('2024-11-29T14:03:09+00:00', sameDay);
    expect(noticeWhere(notice(), sameDay)).toBe(`frame 3 · [5] · ${time}`);
    expect(noticeWhere(notice({ frame: null, execution_count: null }), sameDay)).toBe(`between cells · ${time}`);
  });
});

describe('statusBarText', () => {
  it('says just "Logician" without a status', () => {
    expect(statusBarText(null)).toBe('Logician');
  });

  it.each([
    ['idle', 'Logician: idle'],
    ['turn', 'Logician: running'],
    ['compaction', 'Logician: compacting'],
    ['branch_summary', 'Logician: summarising a branch']
  ] as const)('words the phase %s', (phase, text) => {
    expect(statusBarText(status({ phase }))).toBe(text);
  });

  it('shows an unknown phase as it is', () => {
    expect(statusBarText(status({ phase: 'thinking' as IStatus['phase'] }))).toBe('Logician: thinking');
  });

  it('shows tokens only once some were used', () => {
    expect(statusBarText(status())).not.toContain('tok');
    expect(statusBarText(status({ input_tokens: 1234, output_tokens: 0 }))).toBe('Logician: idle · 1.2k/0 tok');
    expect(statusBarText(status({ input_tokens: 0, output_tokens: 5 }))).toBe('Logician: idle · 0/5 tok');
  });

  it('shows the cost when known', () => {
    expect(statusBarText(status({ cost_usd: 0.5 }))).toBe('Logician: idle · $0.50');
    expect(statusBarText(status({ cost_usd: null }))).toBe('Logician: idle');
  });

  it('shows how many approvals wait', () => {
    expect(statusBarText(status({ pending_approvals: 2 }))).toBe('Logician: idle · 2 to approve');
    expect(statusBarText(status({ pending_approvals: 0 }))).not.toContain('approve');
  });

  it('puts it all together', () => {
    expect(
      statusBarText(status({ phase: 'turn', input_tokens: 1234, output_tokens: 340, cost_usd: 0.01, pending_approvals: 1 }))
    ).toBe('Logician: running · 1.2k/340 tok · $0.01 · 1 to approve');
  });
});

describe('budgetText', () => {
  it('is empty without a budget', () => {
    expect(budgetText(undefined)).toBe('');
    expect(budgetText({})).toBe('');
  });

  it('words each limit without "max_" and underscores', () => {
    expect(budgetText({ max_turns: 8, max_cost_usd: 0.5 })).toBe('turns ≤ 8, cost usd ≤ 0.5');
    expect(budgetText({ tool_calls: 20 })).toBe('tool calls ≤ 20');
  });
});

describe('codeLabel', () => {
  it('uses the first non-empty line', () => {
    expect(codeLabel('\n   \n%%agent fix the tests\nmore')).toBe('%%agent fix the tests');
    expect(codeLabel('x = 1')).toBe('x = 1');
  });

  it('is empty for blank code', () => {
    expect(codeLabel('')).toBe('');
    expect(codeLabel('\n  \n\t\n')).toBe('');
  });

  it('truncates a long line with an ellipsis, within the limit', () => {
    const long = 'a'.repeat(100);
    const label = codeLabel(long);
    expect(label).toHaveLength(60);
    expect(label.endsWith('…')).toBe(true);
    expect(label.slice(0, -1)).toBe('a'.repeat(59));
    expect(codeLabel('abcdefghij', 5)).toBe('abcd…');
  });

  it('keeps a line that just fits', () => {
    expect(codeLabel('a'.repeat(60))).toBe('a'.repeat(60));
    expect(codeLabel('abcde', 5)).toBe('abcde');
  });
});

describe('frameFiles', () => {
  it('counts the files a frame changed', () => {
    expect(frameFiles(row({ files: 0 }))).toBe('');
    expect(frameFiles(row({ files: 1 }))).toBe('1 file');
    expect(frameFiles(row({ files: 3, evicted: [] }))).toBe('3 files');
  });

  it('says "large files evicted" when the budget evicted a pre-image, and names them in the tooltip', () => {
    const r = row({ files: 2, evicted: ['data.bin', 'model.pt'] });
    expect(frameFiles(r)).toBe('2 files, large files evicted');
    expect(evictedTooltip(r)).toContain('data.bin, model.pt');
    expect(evictedTooltip(row({ files: 2 }))).toBe('');
    expect(frameFiles(row({ files: 0, evicted: ['x.npy'] }))).toBe('large files evicted');
  });
});

describe('frameCell', () => {
  it('names the execution count, or a dash when there is none', () => {
    expect(frameCell(row({ execution_count: 12 }))).toBe('In [12]');
    expect(frameCell(row({ execution_count: null }))).toBe('-');
  });
});

describe('frameTokens', () => {
  it('is empty when the frame used no tokens', () => {
    expect(frameTokens(row())).toBe('');
  });

  it('shows input/output tokens compactly', () => {
    expect(frameTokens(row({ input_tokens: 12_345, output_tokens: 678 }))).toBe('12k/678 tok');
    expect(frameTokens(row({ input_tokens: 0, output_tokens: 3 }))).toBe('0/3 tok');
  });
});

describe('rewoundTooltip', () => {
  const at = iso(2020, 1, 5, 9, 7, 3);

  it('says when, and how to redo or undo it, in the user\'s words', () => {
    const tip = rewoundTooltip(at);
    expect(tip).toContain(localTime(at));
    expect(tip).toContain('Jan 5 09:07');
    expect(tip).toMatch(/Run it again/);
    expect(tip).toMatch(/undo the rewind/);
    expect(tip).not.toMatch(/ledger entry|frame \d/);
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('shows today\'s rewind as a clock time', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date(2024, 10, 29, 18, 0, 0));
    const tip = rewoundTooltip(iso(2024, 11, 29, 14, 3, 9));
    expect(tip).toContain('Rewound at 14:03:09:');
  });

  it('still reads when the time is unknown', () => {
    const tip = rewoundTooltip(null);
    expect(tip).toContain('an earlier time');
    expect(tip).not.toContain('undefined');
    expect(tip).not.toContain('null');
  });

});

describe('previewLines', () => {
  it('lists files to restore and to delete', () => {
    const lines = previewLines(
      preview({
        files: [
          { path: 'src/a.py', action: 'restore' },
          { path: 'new.txt', action: 'delete' }
        ]
      })
    );
    expect(lines.files).toEqual(['restore src/a.py', 'delete new.txt']);
  });

  it('lists the variables a rewind restores, deletes or cannot restore, by name', () => {
    const lines = previewLines(
      preview({
        variables: [
          { name: 'df', action: 'restore', detail: 'as In [3] left it' },
          { name: 'tmp', action: 'delete' },
          { name: 'gen', action: 'not-restorable', detail: 'cannot be pickled' }
        ]
      })
    );
    expect(lines.variables).toEqual([
      'restore df (as In [3] left it)',
      'delete tmp',
      'cannot restore gen (cannot be pickled)'
    ]);
    expect(previewLines(preview({})).variables).toEqual([]);
  });

  it('lists the paths left alone as changed outside the kernel, with why', () => {
    const lines = previewLines(
      preview({ external: [{ path: 'mine.txt', detail: 'saved in JupyterLab at 20:01:02' }] })
    );
    expect(lines.external).toEqual(['mine.txt: saved in JupyterLab at 20:01:02']);
    expect(lines.files).toEqual([]);
    expect(previewLines(preview({})).external).toEqual([]); // an older kernel sends none
  });

  it('lists conflicts with their detail', () => {
    const lines = previewLines(preview({ conflicts: [{ path: 'b.txt', detail: 'changed since frame 2' }] }));
    expect(lines.conflicts).toEqual(['b.txt: changed since frame 2']);
  });

  it('notes unrestorable files, dropped messages and popped frames', () => {
    const lines = previewLines(
      preview({
        frames: [2, 3, 4],
        skipped: [{ path: 'big.bin', detail: 'too large' }],
        messages_dropped: 6
      })
    );
    expect(lines.notes).toEqual([
      'not restorable: big.bin (too large)',
      '6 conversation message(s) will be dropped',
      '3 frames (2, 3, 4) will be popped'
    ]);
  });

  it('says "frame" for one frame and omits zero dropped messages', () => {
    const lines = previewLines(preview({ frames: [7] }));
    expect(lines.notes).toEqual(['1 frame (7) will be popped']);
    expect(lines.files).toEqual([]);
    expect(lines.conflicts).toEqual([]);
  });
});

describe('compactCount at unit boundaries after rounding', () => {
  it('reads 9,999 as 10k and 999,999 as 1.0M', () => {
    expect(compactCount(9_999)).toBe('10k');
    expect(compactCount(999_999)).toBe('1.0M');
    expect(compactCount(999_500)).toBe('1.0M');
    expect(compactCount(9_949)).toBe('9.9k');
  });
});

describe('keptMessage', () => {
  it('names the files a rewind left alone and why, or says nothing', () => {
    expect(keptMessage(['mine.txt'], [])).toBe('Logician: changed outside this kernel, so left alone: mine.txt');
    expect(keptMessage([], ['b.txt'])).toContain('--force');
    expect(keptMessage([], [])).toBe('');
  });
});

describe('an incomplete rewind (issue 28)', () => {
  const base: IFrameRow = {
    frame: 7, execution_count: 7, cell_id: null, code: 'x', time: '2026-12-03T09:00:00Z',
    outcome: 'ok', status: 'active', files: 1, input_tokens: 0, output_tokens: 0
  };
  it('shows the failed paths instead of the outcome, and offers Resume', () => {
    const row = { ...base, incomplete: 'rewind incomplete: 1 path(s) failed' };
    expect(frameOutcome(row)).toBe('rewind incomplete: 1 path(s) failed');
    expect(resumeTooltip(row)).toContain('Frame 7: rewind incomplete: 1 path(s) failed');
    expect(resumeTooltip(row)).toContain('--skip-failed');
  });
  it('keeps the usual outcome otherwise', () => {
    expect(frameOutcome(base)).toBe('ok');
    expect(frameOutcome({ ...base, status: 'rewound' })).toBe('rewound');
    expect(frameOutcome({ ...base, outcome: null })).toBe('running');
  });
});

describe('frameAriaLabel', () => {
  it('says the cell as the user knows it, its outcome, its files and when it ran', () => {
    const at = iso(2024, 11, 29, 14, 3, 9);
    const said = frameAriaLabel(row({ execution_count: 3, files: 2, time: at }));
    expect(said).toBe(`In [3], ok, 2 files, ${localTime(at)}`);
    expect(frameAriaLabel(row({ execution_count: null, frame: 7, status: 'rewound', time: at }))).toBe(
      `Frame 7, rewound, no files, ${localTime(at)}`
    );
  });
});

import { describe, expect, it } from 'vitest';

import { BUSY_TEXT, busyReason, callLabel, callOfOutput, callTooltip, confirmText, resultText, WORDS_SHOWN } from './call_words';
import type { ICallLine, ICallRewound } from './protocol';

const bash: ICallLine = {
  id: 'b1',
  tool: 'bash',
  words: 'echo from-bash > b.txt; echo more >> data.csv',
  files: ['b.txt', 'data.csv'],
  undoable: true,
  why_not: '',
  rewound: false
};

describe('the words of a call line', () => {
  it('names the tool and what it did, shortened', () => {
    expect(callLabel(bash)).toBe('bash: echo from-bash > b.txt; echo more >> data.csv');
    const long = callLabel({ ...bash, words: 'x'.repeat(200) });
    expect(long.length).toBe('bash: '.length + WORDS_SHOWN);
    expect(long.endsWith('…')).toBe(true);
    expect(callLabel({ ...bash, words: '' })).toBe('bash');
  });

  it('says which files go back, or why the call cannot be rewound', () => {
    expect(callTooltip(bash)).toBe('Restore b.txt, data.csv as before call b1; the rest of the cell stays');
    const many = { ...bash, files: ['1', '2', '3', '4', '5', '6', '7'] };
    expect(callTooltip(many)).toContain('1, 2, 3, 4, 5 and 2 more');
    const none = { ...bash, undoable: false, why_not: 'it changed no file' };
    expect(callTooltip(none)).toBe('Cannot rewind call b1: it changed no file');
  });

  it('asks before rewinding, listing the files', () => {
    const { title, lines } = confirmText(bash);
    expect(title).toBe('Rewind the bash call b1?');
    expect(lines).toContain('  b.txt');
    expect(lines).toContain('  data.csv');
    expect(lines[0]).toContain('2 file(s)');
  });

  it('says what was left alone, and nothing when nothing was', () => {
    const done: ICallRewound = {
      ok: true,
      call_id: 'b1',
      frame: 1,
      restored: ['b.txt'],
      left: [{ path: 'data.csv', detail: 'changed since frame 1 recorded it' }],
      summary: '',
      headline: 'Rewound call b1: 1 file(s) put back, 1 left alone'
    };
    expect(resultText(done).left).toBe('Logician left alone: data.csv (changed since frame 1 recorded it)');
    expect(resultText({ ...done, left: [] }).left).toBeNull();
  });
});

describe('the buttons while a cell runs', () => {
  const idle = { thread: 't', phase: 'idle', model: 'm', frames: 1, input_tokens: 0, output_tokens: 0 } as const;
  it('are off, saying why, while the kernel says a cell runs, even when its busy/idle says idle', () => {
    expect(busyReason({ ...idle, running_cell: true }, 'idle')).toBe(BUSY_TEXT);
    expect(busyReason({ ...idle, phase: 'turn' }, 'idle')).toBe(BUSY_TEXT);
    expect(busyReason(idle, 'busy')).toBe(BUSY_TEXT);
    expect(BUSY_TEXT).toContain('A cell is running');
  });
  it('are on when the kernel is idle and no cell runs', () => {
    expect(busyReason({ ...idle, running_cell: false }, 'idle')).toBeNull();
    expect(busyReason(null, undefined)).toBeNull();
  });
});

describe('the call an agent cell output describes', () => {
  const data = { call_id: 'b1', frame: 2, tool: 'bash', words: 'echo x > a.txt', files: ['a.txt'] };
  it('becomes a call line of its frame', () => {
    const call = callOfOutput(data);
    expect(call).toMatchObject({ id: 'b1', frame: 2, tool: 'bash', files: ['a.txt'], rewound: false });
    expect(callLabel(call!)).toBe('bash: echo x > a.txt');
  });
  it('is refused when a field is missing or of the wrong type', () => {
    expect(callOfOutput(null)).toBeNull();
    expect(callOfOutput({ ...data, frame: '2' })).toBeNull();
    expect(callOfOutput({ ...data, files: [1] })).toBeNull();
    expect(callOfOutput({ ...data, call_id: undefined })).toBeNull();
  });
});

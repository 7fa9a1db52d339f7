/**
 * The words of the *Rewind this call* buttons: a frame's tool calls as lines, what the
 * confirmation asks and what the result says. Pure (no DOM, no kernel): tested in
 * call_words.test.ts; `call_rewind.ts` puts them on screen.
 */

import type { ICallLine, ICallRewound, IStatus } from './protocol';

/** Characters of a call's words shown on its line. */
export const WORDS_SHOWN = 60;

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** `bash: echo hi > b.txt`, the line beside the button. */
export function callLabel(call: ICallLine): string {
  return call.words ? `${call.tool}: ${shorten(call.words, WORDS_SHOWN)}` : call.tool;
}

/** What the call changed, or why it cannot be rewound: the button's tooltip. */
export function callTooltip(call: ICallLine): string {
  if (!call.undoable) {
    return `Cannot rewind call ${call.id}: ${call.why_not}`;
  }
  const n = call.files.length;
  const named = call.files.slice(0, 5).join(', ') + (n > 5 ? ` and ${n - 5} more` : '');
  return `Restore ${named} as before call ${call.id}; the rest of the cell stays`;
}

/** The confirmation's question and its list of files. */
export function confirmText(call: ICallLine): { title: string; lines: string[] } {
  return {
    title: `Rewind the ${call.tool} call ${call.id}?`,
    lines: [
      `Puts back the ${call.files.length} file(s) this call changed; the rest of the cell stays.`,
      ...call.files.map(path => `  ${path}`),
      'Files changed again since are left alone and listed. `Undo rewind` takes it back.'
    ]
  };
}

/** The toast after the rewind, and the note on what was left alone (null when nothing was). */
export function resultText(done: ICallRewound): { headline: string; left: string | null } {
  const left = done.left.length
    ? `Logician left alone: ${done.left.map(p => `${p.path} (${p.detail})`).join('; ')}`
    : null;
  return { headline: done.headline, left };
}

/** The tooltip of every *Rewind this call* button while a cell runs (the kernel's words). */
export const BUSY_TEXT = 'A cell is running: rewind this call when it has finished (a rewind now would race it)';

/**
 * Why the *Rewind this call* buttons are off now, or null when they may be on: a cell runs
 * (the kernel says `running_cell`, an agent turn is on, or the kernel reports busy; the status
 * is needed besides the kernel's own busy/idle, which an answer on the comm's subshell sets to
 * idle while the main shell still works).
 */
export function busyReason(status: IStatus | null, kernelStatus: string | undefined): string | null {
  const running = !!status?.running_cell || status?.phase === 'turn' || kernelStatus === 'busy';
  return running ? BUSY_TEXT : null;
}

/** What the agent cell's output carries for one call (`call_buttons.py`'s MIME data). */
export interface ICallOutputData {
  call_id: string;
  frame: number;
  tool: string;
  words: string;
  files: string[];
}

/** The output's data as a call line, or null when it is not the kernel's shape. */
export function callOfOutput(data: unknown): (ICallLine & { frame: number }) | null {
  const d = data as Partial<ICallOutputData> | null;
  if (
    !d ||
    typeof d.call_id !== 'string' ||
    typeof d.frame !== 'number' ||
    typeof d.tool !== 'string' ||
    !Array.isArray(d.files) ||
    !d.files.every(f => typeof f === 'string')
  ) {
    return null;
  }
  return {
    id: d.call_id,
    frame: d.frame,
    tool: d.tool,
    words: typeof d.words === 'string' ? d.words : '',
    files: d.files,
    undoable: true,
    why_not: '',
    rewound: false
  };
}

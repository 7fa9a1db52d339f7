/**
 * The words of the *Rewind this call* buttons: a frame's tool calls as lines, what the
 * confirmation asks and what the result says. Pure (no DOM, no kernel): tested in
 * call_words.test.ts; `call_rewind.ts` puts them on screen.
 */

import type { ICallLine, ICallRewound } from './protocol';

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

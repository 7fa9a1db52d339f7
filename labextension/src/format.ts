/**
 * How the sidebar and the status bar word things (pure).
 */
import type { IFrameRow, INotice, IPreview, IRestoreProgress, IStatus } from './protocol';

/** 1234 -> "1.2k", 1234567 -> "1.2M". */
export function compactCount(n: number): string {
  if (n < 1000) {
    return String(n);
  }
  // Decide the unit on the rounded value, so 9,999 reads "10k" and 999,999 reads "1.0M".
  if (n < 9_950) {
    return `${(n / 1000).toFixed(1)}k`;
  }
  if (n < 999_500) {
    return `${Math.round(n / 1000)}k`;
  }
  return `${(n / 1_000_000).toFixed(1)}M`;
}

export function formatCost(cost: number | null | undefined): string {
  if (cost === null || cost === undefined) {
    return '';
  }
  return cost < 0.01 && cost > 0 ? `$${cost.toFixed(4)}` : `$${cost.toFixed(2)}`;
}

/** An ISO time as the user's local clock shows it: "14:03:09" (today) or "Nov 29 14:03". */
export function localTime(iso: string | null | undefined, now: Date = new Date()): string {
  if (!iso) {
    return '';
  }
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) {
    return iso;
  }
  const pad = (n: number) => String(n).padStart(2, '0');
  const clock = `${pad(t.getHours())}:${pad(t.getMinutes())}:${pad(t.getSeconds())}`;
  if (t.toDateString() === now.toDateString()) {
    return clock;
  }
  const month = t.toLocaleString('en', { month: 'short' });
  return `${month} ${t.getDate()} ${clock.slice(0, 5)}`;
}

const PHASES: Record<string, string> = {
  idle: 'idle',
  turn: 'running',
  compaction: 'compacting',
  branch_summary: 'summarising a branch',
  rewinding: 'rewinding'
};

const RESTORING: Record<IRestoreProgress['operation'], string> = {
  rewind: 'Rewinding',
  undo: 'Undoing the rewind',
  resume: 'Resuming the rewind',
  first_snapshot: 'First snapshot',
  capture: "Capturing the cell's files",
  large_capture: 'Large file'
};

/** What a restore in progress says: "Rewinding: restoring 12,400 / 20,000 files". */
export function progressText(progress: IRestoreProgress): string {
  const what = RESTORING[progress.operation] ?? progress.operation;
  if (progress.total === 0) {
    return `${what}…`;
  }
  if (progress.operation === 'large_capture') {
    const mb = (n: number) => Math.round(n / 1e6).toLocaleString('en');
    const name = (progress.path ?? '').split('/').pop() || 'a file';
    return `${what}: capturing ${name} ${mb(progress.done)} / ${mb(progress.total)} MB`;
  }
  const files = progress.total === 1 ? 'file' : 'files';
  if (progress.operation === 'first_snapshot' || progress.operation === 'capture') {
    const percent = Math.floor(progressFraction(progress) * 100);
    return `${what}: scanning ${progress.done.toLocaleString('en')} / ${progress.total.toLocaleString('en')} ${files} (${percent}%)`;
  }
  return `${what}: restoring ${progress.done.toLocaleString('en')} / ${progress.total.toLocaleString('en')} ${files}`;
}

/** The part done, 0..1 (0 when there is nothing to count). */
export function progressFraction(progress: IRestoreProgress): number {
  return progress.total > 0 ? Math.min(1, progress.done / progress.total) : 0;
}

/** The status bar's text: "Logician: running · 1.2k/340 tok · $0.01". */
export function statusBarText(status: IStatus | null): string {
  if (!status) {
    return 'Logician';
  }
  const parts = [`Logician: ${PHASES[status.phase] ?? status.phase}`];
  const tokens = status.input_tokens + status.output_tokens;
  if (tokens > 0) {
    parts.push(`${compactCount(status.input_tokens)}/${compactCount(status.output_tokens)} tok`);
  }
  const cost = formatCost(status.cost_usd);
  if (cost) {
    parts.push(cost);
  }
  if (status.pending_approvals) {
    parts.push(`${status.pending_approvals} to approve`);
  }
  if (status.unread_notices) {
    parts.push(`${status.unread_notices} notice${status.unread_notices === 1 ? '' : 's'}`);
  }
  if (status.audit_problems) {
    parts.push('⚠ audit log damaged');
  }
  return parts.join(' · ');
}

/** Where a notice was said: `frame 3 · [5] · 14:03` (`between cells` at the kernel's start). */
export function noticeWhere(notice: INotice, now: Date = new Date()): string {
  const parts: string[] = [];
  if (notice.frame !== null) {
    parts.push(`frame ${notice.frame}`);
  }
  if (notice.execution_count !== null) {
    parts.push(`[${notice.execution_count}]`);
  }
  if (parts.length === 0) {
    parts.push('between cells');
  }
  parts.push(localTime(notice.time, now));
  return parts.join(' · ');
}

/** The audit log's damage as one warning ('' when it is intact): `%logician audit` names the
 * records. Never silent: a damaged log must not read as "no decisions". */
export function auditWarning(status: IStatus | null): string {
  const n = status?.audit_problems ?? 0;
  if (!n) {
    return '';
  }
  return `${n} audit record${n === 1 ? '' : 's'} damaged or unchecked: run %logician audit`;
}

/** Budget limits as "turns ≤ 8, cost usd ≤ 0.5" ('' for none). */
export function budgetText(budget: Record<string, number> | undefined): string {
  if (!budget) {
    return '';
  }
  return Object.entries(budget)
    .map(([k, v]) => `${k.replace(/^max_/, '').replace(/_/g, ' ')} ≤ ${v}`)
    .join(', ');
}

/** The first non-empty line of a cell's code, for a one-line label. */
export function codeLabel(code: string, max = 60): string {
  const line = code.split('\n').find(l => l.trim()) ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export function frameCell(row: IFrameRow): string {
  return row.execution_count === null ? '-' : `In [${row.execution_count}]`;
}

/** The files column of a timeline row: how many changed, and whether large pre-images are gone. */
export function frameFiles(row: IFrameRow): string {
  const files = row.files ? `${row.files.toLocaleString('en')} file${row.files === 1 ? '' : 's'}` : '';
  if (!row.evicted?.length) {
    return files;
  }
  return files ? `${files}, large files evicted` : 'large files evicted';
}

/** The outcome column: "rewind incomplete: N path(s) failed" wins over the cell's outcome. */
export function frameOutcome(row: IFrameRow): string {
  if (row.incomplete) {
    return row.incomplete;
  }
  return row.status === 'rewound' ? 'rewound' : row.outcome ?? 'running';
}

/** What a screen reader says of a timeline row: the cell as the user knows it, its outcome, its
 * files and when it ran ("In [3], ok, 2 files, 10:32"; "Frame 7, rewound, 10:40"). */
export function frameAriaLabel(row: IFrameRow): string {
  const cell = row.execution_count === null ? `Frame ${row.frame}` : `In [${row.execution_count}]`;
  const parts = [cell, frameOutcome(row), frameFiles(row) || 'no files', localTime(row.time)];
  return parts.filter(Boolean).join(', ');
}

/** The Resume button's tooltip on a frame whose rewind is incomplete. */
export function resumeTooltip(row: IFrameRow): string {
  return (
    `Frame ${row.frame}: ${row.incomplete}. Resume retries exactly the failed paths ` +
    '(free disk space first); `%logician rewind --skip-failed` finishes without them.'
  );
}

/** The tooltip of the files column: which evicted paths a rewind cannot restore. */
export function evictedTooltip(row: IFrameRow): string {
  if (!row.evicted?.length) {
    return '';
  }
  return `Large files evicted by the disk budget (a rewind restores the rest): ${row.evicted.join(', ')}`;
}

export function frameTokens(row: IFrameRow): string {
  if (!row.input_tokens && !row.output_tokens) {
    return '';
  }
  return `${compactCount(row.input_tokens)}/${compactCount(row.output_tokens)} tok`;
}

/** The tooltip of a greyed cell, in the user's words (no ledger entries, no frame ids). */
export function rewoundTooltip(at: string | null | undefined): string {
  const when = at ? localTime(at) : 'an earlier time';
  return `Rewound at ${when}: what this cell did to files, variables and the conversation was undone; its output is stale. Run it again to redo it, or undo the rewind.`;
}

/** The lines of a rewind confirmation. */
export function previewLines(preview: IPreview): {
  files: string[];
  variables: string[];
  conflicts: string[];
  external: string[];
  notes: string[];
} {
  const files = preview.files.map(f => `${f.action === 'delete' ? 'delete' : 'restore'} ${f.path}`);
  const variables = (preview.variables ?? []).map(
    v => `${VARIABLE_ACTIONS[v.action] ?? v.action} ${v.name}${v.detail ? ` (${v.detail})` : ''}`
  );
  const conflicts = preview.conflicts.map(c => `${c.path}: ${c.detail}`);
  const external = (preview.external ?? []).map(e => `${e.path}: ${e.detail}`);
  const notes: string[] = [];
  for (const s of preview.skipped) {
    notes.push(`not restorable: ${s.path} (${s.detail})`);
  }
  if (preview.messages_dropped) {
    notes.push(`${preview.messages_dropped} conversation message(s) will be dropped`);
  }
  if (!preview.cells) {
    // A kernel that names no cells: say the frames (else the Cells section says `In [n]`).
    const n = preview.frames.length;
    notes.push(`${n} frame${n === 1 ? '' : 's'} (${preview.frames.join(', ')}) will be popped`);
  }
  return { files, variables, conflicts, external, notes };
}

const VARIABLE_ACTIONS: Record<string, string> = {
  restore: 'restore',
  delete: 'delete',
  'not-restorable': 'cannot restore',
  'not-live': 'not live'
};

/** The notice after a rewind that left files alone ("" when it left none): names first, since
 * a notification is short; the full reasons are in the rewind report. */
export function keptMessage(external: string[], conflicts: string[]): string {
  const parts: string[] = [];
  if (external.length) {
    parts.push(`changed outside this kernel, so left alone: ${external.join(', ')}`);
  }
  if (conflicts.length) {
    parts.push(`conflicts left alone (--force overwrites): ${conflicts.join(', ')}`);
  }
  return parts.length ? `Logician: ${parts.join('; ')}` : '';
}

/** Why *Undo rewind* is off (null: on). A kernel that does not say keeps it on (it answers
 * an undo with its reason). */
export function undoRefused(status: IStatus): string | null {
  return typeof status.undo_refused === 'string' ? status.undo_refused : null;
}

/** The newest frame a rewind can still pop (the last cell that did work), from rows newest
 * first; undefined when every one was rewound or is still running. */
export function lastActive(rows: IFrameRow[]): IFrameRow | undefined {
  return rows.find(row => row.status === 'active');
}

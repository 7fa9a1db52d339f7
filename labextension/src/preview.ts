/**
 * The rewind preview's files, pure: grouped by directory with counts and wording ("data/parts/
 * — 19,998 files created → delete"), a group's files loaded a page at a time from the kernel,
 * and the cells a rewind pops in the user's words (`In [2]`).
 */
import type { IPreview, IPreviewFile, IPreviewGroup } from './protocol';

/** Files listed per page when a group is expanded (and per "Show more"). */
export const GROUP_PAGE = 200;

/** "data/parts/ — 19,998 files created → delete" (the popped cells created them, the rewind
 * deletes them); files the cells deleted come back: "deleted → recreate"; files they changed
 * are put back: "changed → restore". */
export function groupLabel(group: IPreviewGroup): string {
  const where = group.directory === '' ? '(top level)' : `${group.directory}${group.below ? ' and below' : ''}`;
  const n = (count: number) => `${count.toLocaleString('en')} file${count === 1 ? '' : 's'}`;
  const parts: string[] = [];
  if (group.delete) {
    parts.push(`${n(group.delete)} created → delete`);
  }
  const recreate = group.recreate ?? 0;
  if (recreate) {
    parts.push(`${n(recreate)} deleted → recreate`);
  }
  if (group.restore - recreate) {
    parts.push(`${n(group.restore - recreate)} changed → restore`);
  }
  return `${where} — ${parts.join(', ') || 'no files'}`;
}

/** What the rewind does to one file, in the user's word: a file the popped cells created is
 * deleted, one they deleted is recreated, one they changed is restored. */
export function fileWord(file: IPreviewFile): 'delete' | 'recreate' | 'restore' {
  return file.action === 'delete' ? 'delete' : file.action === 'recreate' ? 'recreate' : 'restore';
}

/** Files grouped by their directory, for a kernel that sends no groups (all files listed). */
export function groupFiles(files: IPreviewFile[]): { group: IPreviewGroup; files: IPreviewFile[] }[] {
  const byDir = new Map<string, IPreviewFile[]>();
  for (const file of files) {
    const cut = file.path.replace(/\/+$/, '').lastIndexOf('/');
    const dir = cut < 0 ? '' : file.path.slice(0, cut + 1);
    const list = byDir.get(dir);
    if (list) {
      list.push(file);
    } else {
      byDir.set(dir, [file]);
    }
  }
  return [...byDir.keys()].sort().map(directory => {
    const members = byDir.get(directory)!;
    const del = members.filter(f => f.action === 'delete').length;
    const recreate = members.filter(f => f.action === 'recreate').length;
    return { group: { directory, below: false, delete: del, restore: members.length - del, recreate }, files: members };
  });
}

/** The files of one group, loaded a page at a time; never asks for a page twice at once. */
export class GroupPager {
  constructor(
    readonly total: number,
    private readonly _fetch: (offset: number, limit: number) => Promise<IPreviewFile[]>,
    loaded: IPreviewFile[] = []
  ) {
    this._rows = [...loaded];
  }

  get rows(): readonly IPreviewFile[] {
    return this._rows;
  }

  get complete(): boolean {
    return this._rows.length >= this.total;
  }

  /** Load the next page (nothing when complete or a page is on its way); the rows added. */
  async more(limit = GROUP_PAGE): Promise<IPreviewFile[]> {
    if (this.complete || this._busy) {
      return [];
    }
    this._busy = true;
    try {
      const page = await this._fetch(this._rows.length, limit);
      this._rows.push(...page);
      this._ended = page.length === 0; // the kernel has no more: stop asking
      return page;
    } finally {
      this._busy = false;
    }
  }

  get ended(): boolean {
    return this._ended || this.complete;
  }

  private _rows: IPreviewFile[];
  private _busy = false;
  private _ended = false;
}

/** The cells the rewind pops, in the user's words: "In [2], In [3]". */
export function cellsLine(preview: IPreview): string {
  if (preview.cells?.length) {
    return preview.cells.map(c => (c.execution_count !== null ? `In [${c.execution_count}]` : `frame ${c.frame}`)).join(', ');
  }
  return preview.frames.map(f => `frame ${f}`).join(', ');
}

/** The dialog's title: "Rewind to before In [2]?" (the cell the user knows). */
export function dialogTitle(preview: IPreview): string {
  const first = preview.cells?.find(c => c.frame === preview.frame);
  const what = first && first.execution_count !== null ? `In [${first.execution_count}]` : `frame ${preview.frame}`;
  return `Rewind to before ${what}?`;
}

/** Whether a path belongs to a group (its directory, or below it when the group is folded). */
export function inGroup(path: string, group: IPreviewGroup): boolean {
  if (!path.startsWith(group.directory)) {
    return false;
  }
  return group.below || !path.slice(group.directory.length).replace(/\/+$/, '').includes('/');
}

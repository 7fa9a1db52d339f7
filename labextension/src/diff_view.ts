/**
 * The diff tab: what one frame changed in a file (or what a rewind would change), in the main
 * area. Text and code as a line diff, side by side (before | after, changed lines facing each
 * other) or unified, as the user last chose (the `diffLayout` setting); CSV/TSV as a table diff
 * (changed cells marked, rows and columns added or removed), images side by side, notebooks
 * cell by cell (matched by nbdime when the kernel has it), binary files by size and sha256; long
 * files page by page (the kernel sends one page of each side), a long list of files a page at a
 * time.
 *
 * Owns: asking `frames.files` / `frames.diff` and drawing the answer; every colour is a
 * --jp-* variable (style/base.css), so it reads in light and dark themes.
 * Must never: change a file or rewind anything.
 */
import { MainAreaWidget } from '@jupyterlab/apputils';
import type { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { Widget } from '@lumino/widgets';

import { jpButton } from './buttons';
import type { LogicianConnection } from './connection';
import { csvTableDiff, lineDiff, splitLines } from './csv_diff';
import { pairLines } from './line_pairs';
import { Newest } from './newest';
import { type DiffLayout, preferences, setPreference } from './preferences';
import type { ICellMatch, IDiffSide, IFileDiff, IFileRow } from './protocol';

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) {
    node.className = cls;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

function bytes(n: number | null): string {
  return n === null ? '—' : `${n.toLocaleString('en')} bytes`;
}

/** Files listed per `frames.files` request (and per "Show more"). */
export const FILES_PAGE = 500;

/** Where diff tabs are added (set once by the plugin). */
let opener: ((widget: MainAreaWidget) => void) | null = null;

/** JupyterLab's CodeMirror languages, which colour a script's lines (set by the plugin). */
let languages: IEditorLanguageRegistry | null = null;

export function setDiffOpener(
  open: (widget: MainAreaWidget) => void,
  registry: IEditorLanguageRegistry | null = null
): void {
  opener = open;
  languages = registry;
}

/** Open a diff tab for `frame`: one path of it, or (no path) its list of files to pick from. */
export function openDiff(
  connection: LogicianConnection,
  frame: number,
  options: { path?: string; preview?: boolean; label?: string } = {}
): void {
  const view = new DiffView(connection, frame, options.preview ?? false);
  const tab = new MainAreaWidget({ content: view });
  tab.id = `logician-diff-${frame}-${Date.now()}`;
  tab.title.label = options.path
    ? `${options.preview ? 'Rewind' : 'Diff'}: ${options.path.split('/').pop()}`
    : `Diff: ${options.label ?? `frame ${frame}`}`;
  tab.title.closable = true;
  if (opener) {
    opener(tab);
  } else {
    Widget.attach(tab, document.body);
  }
  void (options.path ? view.showPath(options.path, 1) : view.listFiles());
}

export class DiffView extends Widget {
  constructor(
    private readonly connection: LogicianConnection,
    private readonly frame: number,
    private readonly preview: boolean
  ) {
    super();
    this.addClass('lk-DiffView');
    this.node.appendChild(this._files);
    this.node.appendChild(this._body);
  }

  /** The frame's files, a page at a time, each opening its diff below. */
  async listFiles(): Promise<void> {
    this._files.replaceChildren(el('div', 'lk-DiffView-note', 'Reading the files…'));
    this._list.replaceChildren();
    this._listed = 0;
    if (await this._moreFiles()) {
      this._files.replaceChildren(this._count, this._list, this._more);
      const first = this._list.querySelector<HTMLElement>('.lk-DiffView-fileLink');
      if (first?.dataset.path) {
        await this.showPath(first.dataset.path, 1);
      }
    }
  }

  /** The next page of files, appended to the list; false when it could not be read. */
  private async _moreFiles(): Promise<boolean> {
    this._more.disabled = true;
    try {
      const answer = await this.connection.ask(
        { type: 'frames.files', frame: this.frame, offset: this._listed, limit: FILES_PAGE },
        'frames.files'
      );
      for (const row of answer.rows) {
        this._list.appendChild(this._fileItem(row));
      }
      this._listed += answer.rows.length;
      const total = (this._total = answer.total);
      const left = answer.rows.length ? total - this._listed : 0; // an empty page: nothing more to ask
      this._count.textContent =
        `${total.toLocaleString('en')} file${total === 1 ? '' : 's'}` +
        (this._listed < total ? ` (${this._listed.toLocaleString('en')} listed)` : '');
      this._more.hidden = left <= 0;
      this._more.textContent = `Show more (${left.toLocaleString('en')} left)`;
      this._failed.remove();
      return true;
    } catch (err) {
      this._failed.textContent = `Could not list the files: ${(err as Error).message}`;
      if (this._listed) {
        // the files listed stay; the button asks for the same page again
        this._more.textContent = `Try again (${(this._total - this._listed).toLocaleString('en')} left)`;
        this._files.insertBefore(this._failed, this._more);
      } else {
        this._files.replaceChildren(this._failed);
      }
      return false;
    } finally {
      this._more.disabled = false;
    }
  }

  private _fileItem(row: IFileRow): HTMLElement {
    const item = el('li', 'lk-DiffView-file');
    const link = el('button', 'lk-DiffView-fileLink', row.path);
    link.dataset.path = row.path;
    link.title = `${row.action}, ${row.kind}: ${bytes(row.before_size)} → ${bytes(row.after_size)}`;
    link.onclick = () => void this.showPath(row.path, 1);
    item.appendChild(link);
    item.appendChild(el('span', 'lk-DiffView-fileKind', `${row.action} · ${row.kind}`));
    return item;
  }

  /** Page `page` of one path's diff. */
  async showPath(path: string, page: number): Promise<void> {
    const current = this._asked.ask(); // a later choice wins over this one's late answer
    this._body.replaceChildren(el('div', 'lk-DiffView-note', `Reading ${path}…`));
    let diff: IFileDiff;
    try {
      diff = await this.connection.ask(
        { type: 'frames.diff', frame: this.frame, path, page, preview: this.preview },
        'frames.diff'
      );
    } catch (err) {
      if (current()) {
        this._body.replaceChildren(el('div', 'lk-DiffView-error', `Could not read ${path}: ${(err as Error).message}`));
      }
      return;
    }
    if (!current()) {
      return;
    }
    this._diff = diff;
    this._draw();
  }

  /** The last diff read, in the current layout. */
  private _draw(): void {
    const diff = this._diff;
    if (!diff) {
      return;
    }
    this._body.replaceChildren(this._header(diff), ...this._content(diff));
    this._body.dataset.kind = diff.kind;
    this._body.dataset.path = diff.path;
    this._body.dataset.layout = preferences.diffLayout;
  }

  /** "Side by side | Unified", for the kinds drawn as line diffs; the choice is saved. */
  private _layoutToggle(): HTMLElement {
    const group = el('span', 'lk-DiffView-layout');
    group.setAttribute('role', 'group');
    group.setAttribute('aria-label', 'Diff layout');
    for (const [value, text] of [
      ['side-by-side', 'Side by side'],
      ['unified', 'Unified']
    ] as [DiffLayout, string][]) {
      const button = el('button', 'lk-DiffView-layoutButton', text);
      button.dataset.layout = value;
      button.setAttribute('aria-pressed', String(preferences.diffLayout === value));
      button.onclick = () => {
        if (preferences.diffLayout !== value) {
          setPreference('diffLayout', value);
          this._draw();
        }
      };
      group.appendChild(button);
    }
    return group;
  }

  private _header(diff: IFileDiff): HTMLElement {
    const head = el('div', 'lk-DiffView-header');
    const [left, right] = this.preview ? ['now on disk', 'after the rewind'] : ['before the cell', 'after the cell'];
    head.appendChild(el('span', 'lk-DiffView-path', diff.path));
    head.appendChild(
      el('span', 'lk-DiffView-sizes', `${left}: ${sideWords(diff.before)} · ${right}: ${sideWords(diff.after)}`)
    );
    if (diff.kind === 'text' || diff.kind === 'notebook') {
      head.appendChild(this._layoutToggle());
    }
    if (diff.pages > 1) {
      const pager = el('span', 'lk-DiffView-pager');
      const prev = el('button', 'lk-DiffView-prev', '‹ Previous');
      prev.disabled = diff.page <= 1;
      prev.onclick = () => void this.showPath(diff.path, diff.page - 1);
      const next = el('button', 'lk-DiffView-next', 'Next ›');
      next.disabled = diff.page >= diff.pages;
      next.onclick = () => void this.showPath(diff.path, diff.page + 1);
      pager.append(prev, el('span', 'lk-DiffView-pageOf', `page ${diff.page} of ${diff.pages}`), next);
      head.appendChild(pager);
    }
    return head;
  }

  private _content(diff: IFileDiff): HTMLElement[] {
    const notes = [diff.before, diff.after]
      .filter(s => s.note)
      .map(s => el('div', 'lk-DiffView-note', s.note));
    switch (diff.kind) {
      case 'csv':
        return [...notes, csvTable(diff)];
      case 'image':
        return [...notes, imagePair(diff, this.preview)];
      case 'notebook':
        return [...notes, notebookCells(diff)];
      case 'binary':
        return [...notes, binaryFacts(diff)];
      default:
        return [
          ...notes,
          textDiff(diff.before.text ?? '', diff.after.text ?? '', diff.before.first_line ?? 1, diff.after.first_line ?? 1, diff.path)
        ];
    }
  }

  private _files = el('div', 'lk-DiffView-fileBox');
  private _count = el('div', 'lk-DiffView-count');
  private _list = (() => {
    const list = el('ul', 'lk-DiffView-files');
    list.setAttribute('aria-label', 'Files the cell changed');
    return list;
  })();
  private _more = (() => {
    const more = jpButton('Show more', 'default', 'List the next files of this frame', 'lk-DiffView-more');
    more.hidden = true;
    more.onclick = () => void this._moreFiles();
    return more;
  })();
  private _listed = 0;
  private _total = 0;
  /** Why the last page of files could not be read, shown until one is. */
  private _failed = (() => {
    const failed = el('div', 'lk-DiffView-error');
    failed.setAttribute('role', 'alert');
    return failed;
  })();
  private _body = el('div', 'lk-DiffView-body');
  private _diff: IFileDiff | null = null;
  private readonly _asked = new Newest(); // the path shown last asked for
}

function sideWords(side: IDiffSide): string {
  switch (side.state) {
    case 'absent':
      return 'no file';
    case 'refused':
      return 'not read';
    case 'uncaptured':
      return side.size === null ? 'not captured' : `${bytes(side.size)}, not captured`;
    default:
      return bytes(side.size);
  }
}

/** A text diff in the chosen layout: two panes or one unified column. */
export function textDiff(before: string, after: string, firstBefore = 1, firstAfter = 1, path = ''): HTMLElement {
  return preferences.diffLayout === 'unified'
    ? lineTable(before, after, firstBefore, firstAfter, path)
    : splitTable(before, after, firstBefore, firstAfter, path);
}

/** The CodeMirror language JupyterLab would colour `path` with, if any. */
function languageOf(path: string): ReturnType<IEditorLanguageRegistry['findByFileName']> {
  return languages && path ? languages.findByFileName(path.split('/').pop() ?? path) : null;
}

/** A table cell holding one line, its tokens coloured when the file has a language. */
function codeCell(cls: string, text: string, language: ReturnType<typeof languageOf>): HTMLTableCellElement {
  // highlight() appends the coloured tokens: the cell starts empty when it runs
  const td = el('td', cls, language ? undefined : text);
  if (language && languages) {
    // line by line (a page may start inside a string): the plain text stays if it fails
    languages.highlight(text, language, td).catch(() => (td.textContent = text));
  }
  return td;
}

/** A line diff: number before, number after, mark, text. */
export function lineTable(before: string, after: string, firstBefore = 1, firstAfter = 1, path = ''): HTMLElement {
  const table = el('table', 'lk-DiffView-lines');
  const language = languageOf(path);
  if (language) {
    table.classList.add('cm-s-jupyter'); // JupyterLab's highlighting theme colours the tokens
  }
  const ops = lineDiff(splitLines(before), splitLines(after));
  for (const op of ops) {
    const tr = el('tr', `lk-DiffView-line lk-mod-${op.kind}`);
    tr.appendChild(el('td', 'lk-DiffView-num', op.a === undefined ? '' : String(op.a + firstBefore)));
    tr.appendChild(el('td', 'lk-DiffView-num', op.b === undefined ? '' : String(op.b + firstAfter)));
    tr.appendChild(el('td', 'lk-DiffView-mark', op.kind === 'add' ? '+' : op.kind === 'del' ? '−' : ' '));
    tr.appendChild(codeCell('lk-DiffView-text', op.text, language));
    table.appendChild(tr);
  }
  if (!ops.length) {
    return el('div', 'lk-DiffView-note', 'Both sides are empty.');
  }
  return table;
}

/** Two panes, before | after: rows aligned, a changed line facing the line that replaced it,
 * an added or removed line facing a blank. */
export function splitTable(before: string, after: string, firstBefore = 1, firstAfter = 1, path = ''): HTMLElement {
  const rows = pairLines(lineDiff(splitLines(before), splitLines(after)));
  if (!rows.length) {
    return el('div', 'lk-DiffView-note', 'Both sides are empty.');
  }
  const table = el('table', 'lk-DiffView-split');
  const language = languageOf(path);
  if (language) {
    table.classList.add('cm-s-jupyter');
  }
  const cols = el('colgroup', '');
  for (const cls of ['lk-DiffView-numCol', 'lk-DiffView-textCol', 'lk-DiffView-numCol', 'lk-DiffView-textCol']) {
    cols.appendChild(el('col', cls));
  }
  table.appendChild(cols);
  for (const row of rows) {
    const tr = el('tr', `lk-DiffView-pair lk-mod-${row.kind}`);
    for (const [line, first, side, mod] of [
      [row.left, firstBefore, 'lk-DiffView-before', 'lk-mod-del'],
      [row.right, firstAfter, 'lk-DiffView-after', 'lk-mod-add']
    ] as const) {
      tr.appendChild(el('td', 'lk-DiffView-num', line ? String(line.n + first) : ''));
      if (line) {
        const changed = row.kind === 'same' ? '' : ` ${mod}`;
        tr.appendChild(codeCell(`lk-DiffView-text ${side}${changed}`, line.text, language));
      } else {
        tr.appendChild(el('td', `lk-DiffView-text ${side} lk-mod-blank`));
      }
    }
    table.appendChild(tr);
  }
  return table;
}

function csvTable(diff: IFileDiff): HTMLElement {
  const delimiter = diff.path.toLowerCase().endsWith('.tsv') ? '\t' : ',';
  const page1 = (diff.before.page ?? 1) === 1;
  // the header comes with page 1 only: later pages are diffed as rows under no header
  const t = csvTableDiff(page1 ? (diff.before.text ?? '') : `\n${diff.before.text ?? ''}`, page1 ? (diff.after.text ?? '') : `\n${diff.after.text ?? ''}`, delimiter);
  const box = el('div', 'lk-DiffView-csv');
  box.appendChild(
    el(
      'div',
      'lk-DiffView-summary',
      `${t.changed} row(s) changed, ${t.added} added, ${t.removed} removed` +
        `${t.columns.some(c => c.status !== 'same') ? `; columns ${t.columns.filter(c => c.status !== 'same').map(c => `${c.name} ${c.status}`).join(', ')}` : ''}`
    )
  );
  const table = el('table', 'lk-DiffView-table');
  const head = el('tr', '');
  head.appendChild(el('th', 'lk-DiffView-rowMark', ''));
  for (const c of t.columns) {
    head.appendChild(el('th', `lk-DiffView-col lk-mod-${c.status}`, c.name));
  }
  table.appendChild(head);
  for (const row of t.rows) {
    const tr = el('tr', `lk-DiffView-row lk-mod-${row.status}`);
    tr.appendChild(el('td', 'lk-DiffView-rowMark', row.status === 'added' ? '+' : row.status === 'removed' ? '−' : row.status === 'changed' ? '~' : ''));
    row.cells.forEach((cell, i) => {
      const td = el('td', `lk-DiffView-cell lk-mod-${t.columns[i].status}`);
      if (cell.changed) {
        td.classList.add('lk-mod-changed');
        td.appendChild(el('del', 'lk-DiffView-was', cell.was ?? ''));
        td.appendChild(el('ins', 'lk-DiffView-now', cell.value));
        td.title = `was ${cell.was ?? ''}`;
      } else {
        td.textContent = cell.value;
      }
      tr.appendChild(td);
    });
    table.appendChild(tr);
  }
  box.appendChild(table);
  return box;
}

function imagePair(diff: IFileDiff, preview: boolean): HTMLElement {
  const pair = el('div', 'lk-DiffView-images');
  const sides: [string, IDiffSide][] = preview
    ? [['Now on disk', diff.before], ['After the rewind', diff.after]]
    : [['Before', diff.before], ['After', diff.after]];
  for (const [label, side] of sides) {
    const fig = el('figure', 'lk-DiffView-image');
    if (side.data && side.mime) {
      const img = el('img', '');
      img.src = `data:${side.mime};base64,${side.data}`;
      img.alt = `${diff.path}: ${label.toLowerCase()}`;
      fig.appendChild(img);
    } else {
      fig.appendChild(el('div', 'lk-DiffView-note', sideWords(side)));
    }
    fig.appendChild(el('figcaption', '', `${label} · ${sideWords(side)}`));
    pair.appendChild(fig);
  }
  return pair;
}

/** What else than its source changed in a notebook cell, in words: "outputs, execution count". */
function otherChanges(changed: string[]): string {
  return changed
    .filter(c => c !== 'source')
    .map(c => c.replace(/_/g, ' '))
    .join(', ');
}

/** A notebook's cells as nbdime matched them (the kernel sends the rows): an edited cell as a
 * text diff of its source, a cell whose outputs changed named so, a moved cell with where it
 * was. */
function matchedCells(diff: IFileDiff, matches: ICellMatch[]): HTMLElement {
  const box = el('div', 'lk-DiffView-notebook');
  box.dataset.matcher = 'nbdime';
  box.appendChild(el('div', 'lk-DiffView-note', 'Cells matched by nbdime.'));
  const before = diff.before.cells ?? [];
  const after = diff.after.cells ?? [];
  const kinds: Record<ICellMatch['status'], string> = {
    same: 'same',
    changed: 'changed',
    added: 'add',
    removed: 'del',
    moved: 'moved'
  };
  for (const row of matches) {
    const was = row.before === null ? undefined : before[row.before];
    const now = row.after === null ? undefined : after[row.after];
    const others = otherChanges(row.changed);
    const cell = el('div', `lk-DiffView-nbCell lk-mod-${kinds[row.status]}${others ? ' lk-mod-outputs' : ''}`);
    cell.dataset.status = row.status;
    const n = (row.after ?? row.before ?? 0) + 1;
    const words =
      row.status === 'moved'
        ? `moved from cell ${(row.before ?? 0) + 1}`
        : row.status === 'same'
          ? others
            ? `${others} changed`
            : 'unchanged'
          : row.status === 'changed'
            ? others
              ? `source and ${others} changed`
              : 'changed'
            : row.status;
    cell.appendChild(el('div', 'lk-DiffView-nbLabel', `cell ${n} (${words})`));
    if (row.status === 'changed' && was && now) {
      cell.appendChild(textDiff(was.source, now.source));
    } else {
      cell.appendChild(el('pre', 'lk-DiffView-nbSource', (now ?? was)?.source ?? ''));
    }
    box.appendChild(cell);
  }
  return box;
}

/** A notebook's cells: matched by nbdime when the kernel has it, else a diff of the cells'
 * sources (a removed cell facing an added one shown as one changed cell). */
function notebookCells(diff: IFileDiff): HTMLElement {
  if (diff.cell_matches) {
    return matchedCells(diff, diff.cell_matches);
  }
  const box = el('div', 'lk-DiffView-notebook');
  box.dataset.matcher = 'text';
  const before = diff.before.cells ?? [];
  const after = diff.after.cells ?? [];
  const ops = lineDiff(
    before.map(c => c.source),
    after.map(c => c.source)
  );
  // a removed cell facing an added one is a cell whose source changed: shown as a line diff
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i];
    const next = ops[i + 1];
    const cell = el('div', `lk-DiffView-nbCell lk-mod-${op.kind}`);
    if (op.kind === 'del' && next?.kind === 'add') {
      cell.className = 'lk-DiffView-nbCell lk-mod-changed';
      cell.appendChild(el('div', 'lk-DiffView-nbLabel', `cell ${next.b! + 1} (changed)`));
      cell.appendChild(textDiff(op.text, next.text));
      i++;
    } else {
      const n = op.kind === 'del' ? op.a! : op.b!;
      const words = op.kind === 'same' ? 'unchanged' : op.kind === 'add' ? 'added' : 'removed';
      cell.appendChild(el('div', 'lk-DiffView-nbLabel', `cell ${n + 1} (${words})`));
      cell.appendChild(el('pre', 'lk-DiffView-nbSource', op.text));
    }
    box.appendChild(cell);
  }
  return box;
}

function binaryFacts(diff: IFileDiff): HTMLElement {
  const table = el('table', 'lk-DiffView-binary');
  for (const [label, side] of [['Before', diff.before], ['After', diff.after]] as [string, IDiffSide][]) {
    const tr = el('tr', '');
    tr.appendChild(el('th', '', label));
    tr.appendChild(el('td', '', sideWords(side)));
    tr.appendChild(el('td', 'lk-DiffView-sha', side.sha256 ? `sha256 ${side.sha256}` : ''));
    table.appendChild(tr);
  }
  return table;
}

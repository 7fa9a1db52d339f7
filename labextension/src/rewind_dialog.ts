/**
 * The rewind confirmation: what a rewind would do, in a dialog that scales. Files are grouped
 * by directory with counts ("data/parts/ — 19,998 files created → delete"), each group
 * expandable and listed a page at a time from the kernel (`frames.preview.page`); the
 * Variables, Cells, Conflicts and Also sections are always shown, below the files, however
 * many files there are.
 */
import { Dialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { jpButton } from './buttons';
import type { LogicianConnection } from './connection';
import { previewLines } from './format';
import { openDiff } from './diff_view';
import { cellsLine, fileWord, GroupPager, groupFiles, groupLabel, inGroup } from './preview';
import type { IPreview, IPreviewGroup, RewindMode } from './protocol';

/** Files at most for the dialog to open with every group expanded. */
export const OPEN_UP_TO = 50;

export type RewindChoice = {
  mode: RewindMode;
  force: boolean;
  include_external: boolean;
  keep_uncertain: boolean;
};

/** What the dialog's choices say until the user changes them, and what a rewind without the
 * dialog does (the setting "Confirm before rewinding" off): files changed since the frame
 * (conflicts, other programs' saves) are left alone. */
export const DEFAULT_REWIND_CHOICE: RewindChoice = {
  mode: 'both',
  force: false,
  include_external: false,
  keep_uncertain: false
};

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className = '', text = ''): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text) {
    node.textContent = text;
  }
  return node;
}

/** The body of the rewind confirmation. */
export class RewindBody extends Widget implements Dialog.IBodyWidget<RewindChoice> {
  constructor(preview: IPreview, connection: LogicianConnection | null) {
    super();
    this.addClass('lk-RewindDialog');
    this._connection = connection;
    this._frame = preview.frame;
    const lines = previewLines({ ...preview, files: [] });
    const total = preview.files_total ?? preview.files.length;

    const files = el('div', 'lk-RewindDialog-filesBox');
    files.appendChild(
      el('div', 'lk-RewindDialog-heading', total ? `Files (${total.toLocaleString('en')})` : 'Files')
    );
    if (!total) {
      files.appendChild(el('div', 'lk-RewindDialog-none', 'No files to restore.'));
    }
    const list = el('div', 'lk-RewindDialog-files');
    list.setAttribute('role', 'tree');
    list.setAttribute('aria-label', 'Files the rewind changes, by directory');
    const fetchPage = (group: string) => async (offset: number, limit: number) => {
      if (!connection) {
        return [];
      }
      const page = await connection.ask(
        // the options the preview was asked with (none): the pages list what it listed
        { type: 'frames.preview.page', frame: preview.frame, group, offset, limit },
        'frames.preview.page'
      );
      return page.rows;
    };
    const groups = preview.groups
      ? preview.groups.map(group => ({
          group,
          pager: new GroupPager(
            group.delete + group.restore,
            fetchPage(group.directory),
            // the first files came with the preview: a group that holds them all needs no request
            preview.files.length === total ? preview.files.filter(f => inGroup(f.path, group)) : []
          )
        }))
      : groupFiles(preview.files).map(({ group, files: members }) => ({
          group,
          pager: new GroupPager(members.length, async () => [], members)
        }));
    // A small rewind is shown whole; a large one a line per directory, opened on demand.
    const openAll = preview.files.length === total && total <= OPEN_UP_TO;
    for (const { group, pager } of groups) {
      list.appendChild(this._group(group, pager, openAll || groups.length === 1));
    }
    files.appendChild(list);
    this.node.appendChild(files);

    // Always shown, whatever the number of files: what else the rewind does.
    const rest = el('div', 'lk-RewindDialog-rest');
    const section = (title: string, items: string[], cls: string, none: string, more = 0) => {
      rest.appendChild(el('div', 'lk-RewindDialog-heading', title));
      const ul = el('ul', cls);
      for (const item of items) {
        ul.appendChild(el('li', '', item));
      }
      if (!items.length) {
        ul.appendChild(el('li', 'lk-RewindDialog-none', none));
      }
      if (more > items.length) {
        ul.appendChild(el('li', 'lk-RewindDialog-none', `…and ${(more - items.length).toLocaleString('en')} more`));
      }
      rest.appendChild(ul);
    };
    section('Variables', lines.variables, 'lk-RewindDialog-variables', 'No variables change.');
    section('Cells', [cellsLine(preview)], 'lk-RewindDialog-cells', '');
    if (preview.cell_edits?.length) {
      section(
        "The agent's cell edits",
        preview.cell_edits.map(step => `cell ${step.id}: ${step.detail}`),
        'lk-RewindDialog-cellEdits',
        ''
      );
    }
    section(
      'Conflicts: changed since by something else',
      lines.conflicts,
      'lk-RewindDialog-conflicts',
      'No conflicts.',
      preview.conflicts_total
    );
    if (lines.external.length) {
      section(
        'Left alone: changed outside this kernel (your saves, other programs)',
        lines.external,
        'lk-RewindDialog-external',
        '',
        preview.external_total
      );
    }
    section('Also', lines.notes, 'lk-RewindDialog-notes', 'Nothing else: the conversation keeps every message.');
    this.node.appendChild(rest);

    const modeLabel = el('label', 'lk-RewindDialog-mode', 'Rewind ');
    this._mode = el('select', 'jp-mod-styled');
    for (const [value, text] of [
      ['both', 'files, variables and conversation'],
      ['files', 'files only'],
      ['conversation', 'conversation only'],
      ['variables', 'variables only']
    ]) {
      const option = el('option', '', text);
      option.value = value;
      this._mode.appendChild(option);
    }
    this._mode.value = DEFAULT_REWIND_CHOICE.mode;
    modeLabel.appendChild(this._mode);
    rest.appendChild(modeLabel);
    this._force = el('input');
    this._force.type = 'checkbox';
    this._force.checked = DEFAULT_REWIND_CHOICE.force;
    if (lines.conflicts.length) {
      const force = el('label', 'lk-RewindDialog-force');
      force.appendChild(this._force);
      force.appendChild(document.createTextNode(' overwrite the conflicting files too'));
      rest.appendChild(force);
    }
    this._external = el('input');
    this._external.type = 'checkbox';
    this._external.checked = DEFAULT_REWIND_CHOICE.include_external;
    if (lines.external.length) {
      const external = el('label', 'lk-RewindDialog-include-external');
      external.appendChild(this._external);
      external.appendChild(document.createTextNode(' revert the changes made outside this kernel too'));
      rest.appendChild(external);
    }
    // As in the in-cell control: files written while a process of the kernel ran, when
    // another program may have written them too, are rewound unless this is ticked.
    this._uncertain = el('input');
    this._uncertain.type = 'checkbox';
    this._uncertain.checked = DEFAULT_REWIND_CHOICE.keep_uncertain;
    const uncertain = el('label', 'lk-RewindDialog-keep-uncertain');
    uncertain.appendChild(this._uncertain);
    uncertain.appendChild(document.createTextNode(' leave files whose writer is uncertain alone'));
    rest.appendChild(uncertain);
  }

  getValue(): RewindChoice {
    return {
      mode: this._mode.value as RewindMode,
      force: this._force.checked,
      include_external: this._external.checked,
      keep_uncertain: this._uncertain.checked
    };
  }

  /** The file's diff (now on disk against what the rewind puts back), in a tab; the dialog
   * closes, as nothing was rewound. */
  private _openDiff(path: string): void {
    if (!this._connection) {
      return;
    }
    openDiff(this._connection, this._frame, { path, preview: true });
    let w: Widget | null = this.parent;
    while (w && !(w instanceof Dialog)) {
      w = w.parent;
    }
    (w as Dialog<unknown> | null)?.reject();
  }

  private _group(group: IPreviewGroup, pager: GroupPager, open: boolean): HTMLElement {
    const node = el('details', 'lk-RewindDialog-group') as HTMLDetailsElement;
    node.dataset.directory = group.directory;
    node.setAttribute('role', 'treeitem');
    const summary = el('summary', 'lk-RewindDialog-groupLabel', groupLabel(group));
    node.appendChild(summary);
    const ul = el('ul', 'lk-RewindDialog-groupFiles');
    node.appendChild(ul);
    // Why the last page could not be read (cleared when one is): beside the list, never in it,
    // so the rows listed are the pager's rows one for one
    const failed = el('div', 'lk-RewindDialog-pageError');
    failed.setAttribute('role', 'alert');
    failed.hidden = true;
    node.appendChild(failed);
    const more = jpButton('Show more', 'default', 'List the next files of this directory', 'lk-RewindDialog-more');
    more.hidden = true;
    node.appendChild(more);
    const show = () => {
      for (const file of pager.rows.slice(ul.childElementCount)) {
        const item = el('li', 'lk-RewindDialog-file', `${fileWord(file)} `);
        item.dataset.action = file.action;
        const link = el('button', 'lk-RewindDialog-fileLink', file.path);
        link.title = 'Show what the rewind changes in this file';
        link.dataset.path = file.path;
        link.onclick = () => this._openDiff(file.path);
        item.appendChild(link);
        ul.appendChild(item);
      }
      const left = pager.total - pager.rows.length;
      more.hidden = pager.ended || left <= 0;
      more.textContent = `${failed.hidden ? 'Show more' : 'Try again'} (${left.toLocaleString('en')} left)`;
    };
    const load = async () => {
      more.disabled = true;
      try {
        await pager.more();
        failed.hidden = true;
      } catch (err) {
        failed.textContent = `Could not list the files: ${(err as Error).message}`;
        failed.hidden = false;
      } finally {
        more.disabled = false;
      }
      show();
    };
    node.addEventListener('toggle', () => {
      if (node.open && !pager.rows.length) {
        void load();
      } else {
        show();
      }
    });
    more.addEventListener('click', () => void load());
    node.open = open && pager.rows.length > 0;
    if (node.open) {
      show();
    }
    return node;
  }

  private _mode: HTMLSelectElement;
  private _force: HTMLInputElement;
  private _external: HTMLInputElement;
  private _uncertain: HTMLInputElement;
  private _connection: LogicianConnection | null;
  private _frame: number;
}

/**
 * The Logician sidebar: runtime status, pending approvals and the frame timeline of the
 * active notebook's kernel, with "Rewind to here".
 *
 * The timeline is virtual: it renders only the rows in view (plus a few) and asks the kernel
 * for pages of frames as they scroll into view, so 10,000 frames cost what 10 do.
 */
import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';
import type { NotebookPanel } from '@jupyterlab/notebook';
import { Widget } from '@lumino/widgets';

import { ButtonKind, jpButton } from './buttons';
import { showFrameCalls } from './call_rewind';
import type { LogicianConnection } from './connection';
import {
  frameAriaLabel,
  auditWarning,
  noticeWhere,
  budgetText,
  codeLabel,
  evictedTooltip,
  frameOutcome,
  resumeTooltip,
  formatCost,
  frameCell,
  frameFiles,
  frameTokens,
  localTime,
  keptMessage,
  undoRefused
} from './format';
import type { Choice, FrameTarget, IApprovalRequest, IFrameRow, KernelMessage } from './protocol';
import { ConfigSectionView } from './config_view';
import { ConnectModelView } from './connect_view';
import { ModelPickerView } from './model_picker';
import { RestoreProgressView } from './progress';
import { PromptBox } from './prompt_box';
import { dialogTitle } from './preview';
import { DEFAULT_REWIND_CHOICE, RewindBody } from './rewind_dialog';
import type { RewindChoice } from './rewind_dialog';
import { preferences } from './preferences';
import { openDiff } from './diff_view';
import { FramePages, nextFocus, scrollToShow, visibleRange } from './timeline';

export const ROW_HEIGHT = 46;

/** Notices listed in the sidebar at most (newest first; `%logician notices --all` has all). */
export const NOTICES_SHOWN = 50;

const UNDO_TIP = 'Take back the most recent rewind: files, variables and conversation as they were';

const CHOICE_LABELS: [Choice, string, string, ButtonKind][] = [
  ['allow_once', 'Allow once', 'Allow this call only', 'accept'],
  ['allow_session', 'Allow for this session', 'Allow calls like this one until the kernel restarts', 'default'],
  ['always_allow', 'Always allow', 'Allow and save the suggested rule', 'default'],
  ['deny', 'Deny', 'Deny; the note goes to the agent', 'reject'],
  ['deny_and_stop', 'Deny and stop', 'Deny and stop the run; the note goes to the agent', 'warn']
];

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className = '',
  text = ''
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text) {
    node.textContent = text;
  }
  return node;
}

export class LogicianSidebar extends Widget {
  constructor(options: { pageSize?: number } = {}) {
    super();
    this.id = 'logician-sidebar';
    this.addClass('lk-Sidebar');
    this.title.caption = 'Logician: frames, rewind, approvals';
    this._pages = new FramePages(options.pageSize ?? 100);

    const node = this.node;
    const header = el('div', 'lk-Sidebar-header');
    header.appendChild(el('h2', 'lk-Sidebar-title', 'Logician'));
    this._notebookName = el('div', 'lk-Sidebar-notebook');
    header.appendChild(this._notebookName);
    this._stateNode = el('div', 'lk-Sidebar-state');
    header.appendChild(this._stateNode);
    node.appendChild(header);

    this.prompt = new PromptBox();
    node.appendChild(this.prompt.node);

    this._statusNode = el('div', 'lk-Status');
    node.appendChild(this._statusNode);
    this._models = new ModelPickerView();
    node.appendChild(this._models.node);
    this._connect = new ConnectModelView(() => void this._models.load());
    node.appendChild(this._connect.node);
    this._config = new ConfigSectionView();
    node.appendChild(this._config.node);
    this._progress = new RestoreProgressView(el('div', 'lk-Sidebar-progress'));
    node.appendChild(this._progress.node);

    this._approvalsNode = el('div', 'lk-Approvals');
    node.appendChild(this._approvalsNode);

    // Logician's notices (kept out of the cells' outputs): open to read, which marks them read.
    this._noticesNode = el('details', 'lk-Notices') as HTMLDetailsElement;
    this._noticesNode.addEventListener('toggle', () => this._readNoticesIfShown());
    node.appendChild(this._noticesNode);

    const timelineHeader = el('div', 'lk-Timeline-header');
    this._countNode = el('span', 'lk-Timeline-count', 'Frames');
    timelineHeader.appendChild(this._countNode);
    const undo = jpButton('Undo rewind', 'default', UNDO_TIP, 'lk-Timeline-undo');
    this._undo = undo;
    undo.addEventListener('click', () => void this.undoRewind());
    timelineHeader.appendChild(undo);
    node.appendChild(timelineHeader);

    this._scroller = el('div', 'lk-Timeline');
    this._scroller.setAttribute('role', 'list');
    this._scroller.setAttribute(
      'aria-label',
      'Frames of this notebook: arrow keys move between them, Enter goes to the cell, Tab to its buttons'
    );
    this._scroller.addEventListener('keydown', event => this._onTimelineKey(event));
    this._scroller.addEventListener('focusin', event => {
      const row = (event.target as HTMLElement).closest?.('.lk-FrameRow') as HTMLElement | null;
      if (row?.dataset.index) {
        this._focusIndex = Number(row.dataset.index);
      }
    });
    this._spacer = el('div', 'lk-Timeline-spacer');
    this._scroller.appendChild(this._spacer);
    node.appendChild(this._scroller);
    this._scroller.addEventListener('scroll', () => this._scheduleRender());
    this._scroller.addEventListener('click', event => this._onTimelineClick(event));

    this._render();
  }

  /** Show `panel`'s kernel (or nothing, when no notebook is active). */
  setNotebook(panel: NotebookPanel | null, connection: LogicianConnection | null): void {
    if (this._connection) {
      this._connection.stateChanged.disconnect(this._onState, this);
      this._connection.statusChanged.disconnect(this._renderStatus, this);
      this._connection.approvalsChanged.disconnect(this._renderApprovals, this);
      this._connection.announced.disconnect(this._onAnnounced, this);
      this._connection.noticesChanged.disconnect(this._renderNotices, this);
    }
    this._panel = panel;
    this._connection = connection;
    this._progress.setConnection(connection);
    this._models.setConnection(connection);
    this._connect.setConnection(connection);
    this._config.setConnection(connection);
    this.prompt.setNotebook(panel, connection);
    this._thread = undefined;
    this._pages.setTotal(-1);
    this._scroller.scrollTop = 0;
    if (connection) {
      connection.stateChanged.connect(this._onState, this);
      connection.statusChanged.connect(this._renderStatus, this);
      connection.approvalsChanged.connect(this._renderApprovals, this);
      connection.announced.connect(this._onAnnounced, this);
      connection.noticesChanged.connect(this._renderNotices, this);
    }
    this._renderNotices();
    this._notebookName.textContent = panel ? panel.context.path : '';
    this._onState();
  }

  /** Rows in the DOM now (the bounded-rendering check reads this). */
  get renderedRows(): number {
    return this._scroller.querySelectorAll('.lk-FrameRow').length;
  }

  protected onAfterShow(): void {
    this._scheduleRender();
    this._readNoticesIfShown();
  }

  protected onResize(): void {
    this._scheduleRender();
  }

  private _onState(): void {
    const conn = this._connection;
    const state = conn?.state ?? 'no-kernel';
    const words: Record<string, string> = {
      'no-kernel': this._panel ? 'No kernel is running for this notebook.' : 'Open a notebook to see its Logician frames.',
      connecting: 'Connecting to the Logician kernel…',
      'not-logician': `Not a Logician kernel: ${conn?.detail ?? ''}. Pick "Python 3 (Logician)" as the kernel to get frames, rewind and approvals.`,
      ready: '',
      error: `Could not reach the kernel's logician comm: ${conn?.detail ?? ''}`
    };
    this._stateNode.textContent = words[state] ?? state;
    this.node.dataset.state = state;
    this._connect.node.hidden = this._config.node.hidden = state !== 'ready';
    if (state === 'ready') {
      void this._refreshTotal();
      if (this._config.node.open) {
        void this._config.load();
      }
    } else {
      this._pages.setTotal(-1);
    }
    this._renderStatus();
    this._renderApprovals();
    this._render();
  }

  private _onAnnounced(_: LogicianConnection, msg: KernelMessage): void {
    if (msg.type === 'frames.changed') {
      // sent after every cell: with as many frames as before, a row read while its cell ran
      // (no outcome, no Rewind or Calls buttons yet) is read again
      if (!this._pages.setTotal(msg.total)) {
        this._pages.refresh();
      }
      this._render();
    } else if (msg.type === 'frames.rewound' || msg.type === 'frames.undone') {
      this._pages.clear();
      this._render();
    }
  }

  private async _refreshTotal(): Promise<void> {
    const conn = this._connection;
    if (!conn) {
      return;
    }
    const asked = this._pages.generation;
    try {
      const first = await conn.ask({ type: 'frames.list', offset: 0, limit: this._pages.pageSize }, 'frames');
      if (conn !== this._connection) {
        return;
      }
      this._pages.put(0, first.rows, first.total, asked);
      this._render();
    } catch (err) {
      this._stateNode.textContent = `Could not list frames: ${(err as Error).message}`;
    }
  }

  private _scheduleRender(): void {
    if (this._frame !== 0) {
      return;
    }
    this._frame = requestAnimationFrame(() => {
      this._frame = 0;
      this._render();
    });
  }

  private _render(): void {
    const total = Math.max(0, this._pages.total);
    const ready = this._connection?.state === 'ready';
    this._countNode.textContent = ready ? `Frames (${total.toLocaleString('en')})` : 'Frames';
    this._spacer.style.height = `${total * ROW_HEIGHT}px`;
    const range = visibleRange(this._scroller.scrollTop, this._scroller.clientHeight || 600, ROW_HEIGHT, total);
    for (const page of this._pages.missing(range)) {
      void this._fetch(page);
    }
    const rows: HTMLElement[] = [];
    // One row is in the Tab order (the focused one, else the first shown): a roving tabindex.
    const tabbable =
      this._focusIndex >= range.start && this._focusIndex < range.end ? this._focusIndex : range.start;
    for (let i = range.start; i < range.end; i++) {
      const row = this._renderRow(i, this._pages.row(i));
      row.tabIndex = i === tabbable ? 0 : -1;
      rows.push(row);
    }
    const active = document.activeElement as HTMLElement | null;
    const rowHadFocus = !!active?.classList.contains('lk-FrameRow') && this._scroller.contains(active);
    for (const old of Array.from(this._scroller.querySelectorAll('.lk-FrameRow'))) {
      old.remove();
    }
    for (const row of rows) {
      this._scroller.appendChild(row);
    }
    if (rowHadFocus) {
      // the rows are drawn anew: the focus stays on the same row
      (this._scroller.querySelector(`.lk-FrameRow[data-index="${this._focusIndex}"]`) as HTMLElement | null)?.focus();
    }
  }

  /** Arrow, Page, Home and End keys move between rows (scrolling the virtual list); Enter on
   * a row goes to its cell, as a click does. */
  private _onTimelineKey(event: KeyboardEvent): void {
    const target = event.target as HTMLElement;
    if (!target.classList.contains('lk-FrameRow')) {
      return; // a button inside a row keeps its own keys
    }
    if (event.key === 'Enter') {
      event.preventDefault();
      target.click();
      return;
    }
    const pageRows = Math.max(1, Math.floor((this._scroller.clientHeight || 600) / ROW_HEIGHT) - 1);
    const next = nextFocus(event.key, Number(target.dataset.index), Math.max(0, this._pages.total), pageRows);
    if (next === null) {
      return;
    }
    event.preventDefault();
    this._focusIndex = next;
    this._scroller.scrollTop = scrollToShow(
      this._scroller.scrollTop,
      this._scroller.clientHeight || 600,
      ROW_HEIGHT,
      next
    );
    this._render(); // which moves the focus to row `next` (the focus was on a row)
  }

  private async _fetch(page: number): Promise<void> {
    const conn = this._connection;
    if (!conn || conn.state !== 'ready') {
      return;
    }
    const offset = page * this._pages.pageSize;
    const asked = this._pages.markLoading(page);
    try {
      const msg = await conn.ask({ type: 'frames.list', offset, limit: this._pages.pageSize }, 'frames');
      if (conn !== this._connection) {
        return;
      }
      this._pages.put(msg.offset, msg.rows, msg.total, asked);
      this._scheduleRender();
    } catch {
      this._pages.failed(offset, asked);
    }
  }

  private _renderRow(index: number, row: IFrameRow | undefined): HTMLElement {
    const node = el('div', 'lk-FrameRow');
    node.style.top = `${index * ROW_HEIGHT}px`;
    node.style.height = `${ROW_HEIGHT}px`;
    node.setAttribute('role', 'listitem');
    node.dataset.index = String(index);
    if (row === undefined) {
      node.classList.add('lk-mod-loading');
      node.textContent = '…';
      return node;
    }
    node.dataset.frame = String(row.frame);
    if (row.cell_id) {
      node.dataset.cellId = row.cell_id;
    }
    node.setAttribute('aria-label', frameAriaLabel(row));
    node.classList.add(`lk-mod-${row.status}`);
    const top = el('div', 'lk-FrameRow-top');
    top.appendChild(el('span', 'lk-FrameRow-id', `#${row.frame}`));
    top.appendChild(el('span', 'lk-FrameRow-cell', frameCell(row)));
    top.appendChild(el('span', 'lk-FrameRow-time', localTime(row.time)));
    const outcome = frameOutcome(row);
    const kind = row.incomplete ? 'incomplete' : outcome;
    top.appendChild(el('span', `lk-FrameRow-outcome lk-outcome-${kind}`, outcome));
    const files = el('span', 'lk-FrameRow-files', frameFiles(row));
    // a rewound frame's files too: what the cell had changed, read from its snapshot
    if (row.files > 0 && row.status !== 'open') {
      files.classList.add('lk-mod-link');
      files.setAttribute('role', 'button');
      files.tabIndex = 0;
      files.title =
        row.status === 'rewound'
          ? 'Show what this cell had changed in each file (since rewound)'
          : 'Show what this cell changed in each file';
      const open = () => {
        if (this._connection) {
          openDiff(this._connection, row.frame, { label: frameCell(row) });
        }
      };
      files.onclick = open;
      files.onkeydown = e => {
        if (e.key === 'Enter') {
          open();
        }
      };
    }
    if (row.evicted?.length) {
      files.classList.add('lk-mod-evicted');
      files.title = evictedTooltip(row);
    }
    top.appendChild(files);
    top.appendChild(el('span', 'lk-FrameRow-tokens', frameTokens(row)));
    node.appendChild(top);
    const bottom = el('div', 'lk-FrameRow-bottom');
    bottom.appendChild(el('code', 'lk-FrameRow-code', codeLabel(row.code)));
    if (row.incomplete) {
      node.classList.add('lk-mod-incomplete');
      const button = jpButton('Resume', 'accept', resumeTooltip(row), 'lk-FrameRow-resume');
      button.dataset.action = 'resume';
      bottom.appendChild(button);
    } else if (row.status === 'active') {
      const button = jpButton(
        'Rewind to here',
        'default',
        `Restore files, variables and conversation to just before ${row.execution_count !== null ? `In [${row.execution_count}]` : `frame ${row.frame}`}`,
        'lk-FrameRow-rewind'
      );
      button.dataset.action = 'rewind';
      bottom.appendChild(button);
      const calls = jpButton('Calls', 'default', 'The tool calls of this cell, each with Rewind this call', 'lk-FrameRow-calls');
      calls.dataset.action = 'calls';
      bottom.appendChild(calls);
    }
    node.appendChild(bottom);
    node.title =
      row.status === 'rewound'
        ? `${frameCell(row) === '-' ? 'This cell' : frameCell(row)} was rewound at ${localTime(row.rewound_at)}`
        : `${frameCell(row) === '-' ? 'This cell' : frameCell(row)}: click to go to the cell`;
    return node;
  }

  private _onTimelineClick(event: MouseEvent): void {
    const target = event.target as HTMLElement;
    const rowNode = target.closest('.lk-FrameRow') as HTMLElement | null;
    if (!rowNode?.dataset.frame) {
      return;
    }
    const frame = Number(rowNode.dataset.frame);
    if (target.dataset.action === 'rewind') {
      void this.rewind({ frame });
      return;
    }
    if (target.dataset.action === 'calls') {
      void showFrameCalls(this._connection, frame, () => {
        this._pages.clear(); // the frame's files read again
        this._render();
      });
      return;
    }
    if (target.dataset.action === 'resume') {
      void this.resumeRewind();
      return;
    }
    this._scrollToCell(rowNode.dataset.cellId);
  }

  private _scrollToCell(cellId: string | undefined): void {
    const notebook = this._panel?.content;
    if (!notebook || !cellId) {
      return;
    }
    const index = notebook.widgets.findIndex(cell => cell.model.id === cellId);
    if (index < 0) {
      Notification.info('That frame\'s cell is no longer in this notebook.', { autoClose: 4000 });
      return;
    }
    notebook.activeCellIndex = index;
    void notebook.scrollToItem(index, 'smart');
    notebook.widgets[index].node.classList.add('lk-mod-flash');
    setTimeout(() => notebook.widgets[index]?.node.classList.remove('lk-mod-flash'), 1200);
  }

  /** Finish an interrupted or incomplete rewind (its failed paths retried); the kernel says
   * which paths still fail. */
  async resumeRewind(): Promise<boolean> {
    const conn = this._connection;
    if (!conn || conn.state !== 'ready') {
      Notification.warning('Logician: this notebook is not connected to a Logician kernel.', { autoClose: 5000 });
      return false;
    }
    try {
      const done = await conn.ask({ type: 'frames.resume' }, 'frames.resume');
      Notification.success(done.headline ?? done.summary.split('\n')[0], { autoClose: 5000 });
      return true;
    } catch (err) {
      Notification.error(`Logician: the rewind is still incomplete: ${(err as Error).message}`, { autoClose: 10000 });
      return false;
    }
  }

  /** Take back the most recent rewind; the kernel says why when there is none to undo. */
  async undoRewind(): Promise<boolean> {
    const conn = this._connection;
    if (!conn || conn.state !== 'ready') {
      Notification.warning('Logician: this notebook is not connected to a Logician kernel.', { autoClose: 5000 });
      return false;
    }
    try {
      const done = await conn.ask({ type: 'frames.undo' }, 'frames.undo');
      Notification.success(done.headline ?? done.summary.split('\n')[0], { autoClose: 5000 });
      return true;
    } catch (err) {
      Notification.error(`Logician: nothing was undone: ${(err as Error).message}`, { autoClose: 8000 });
      return false;
    }
  }

  /** Ask, with a confirmation listing files and conflicts, then rewind. */
  async rewind(target: FrameTarget): Promise<boolean> {
    return confirmAndRewind(this._connection, target);
  }

  private _renderStatus(): void {
    const node = this._statusNode;
    node.replaceChildren();
    const conn = this._connection;
    const status = conn?.state === 'ready' ? conn.status : null;
    // Off, with the reason as its tooltip, when there is nothing to undo.
    const refused = status ? undoRefused(status) : 'Not connected to a Logician kernel';
    this._undo.disabled = refused !== null;
    this._undo.title = refused ?? UNDO_TIP;
    this._undo.setAttribute('aria-label', refused ? `Undo rewind: ${refused}` : 'Undo rewind');
    if (!status) {
      return;
    }
    if (status.thread !== this._thread) {
      const moved = this._thread !== undefined;
      this._thread = status.thread;
      if (moved) {
        // `%logician thread use`: another timeline, so the cached rows are the old thread's.
        this._pages.clear();
        void this._refreshTotal();
      }
    }
    const rows: [string, string][] = [
      ['Phase', status.phase === 'turn' ? `running (turn ${status.turn ?? 0})` : status.phase],
      ['Model', status.model || '-'],
      ['Tokens', `${status.input_tokens.toLocaleString('en')} in / ${status.output_tokens.toLocaleString('en')} out`]
    ];
    const cost = formatCost(status.cost_usd);
    if (cost) {
      rows.push(['Cost', cost]);
    }
    const budget = budgetText(status.budget);
    if (budget) {
      rows.push(['Budget', budget]);
    }
    if (status.last_outcome) {
      rows.push(['Last run', status.last_outcome]);
    }
    const audit = auditWarning(status);
    if (audit) {
      rows.push(['Audit', audit]);
    }
    const table = el('dl', 'lk-Status-list');
    for (const [k, v] of rows) {
      table.appendChild(el('dt', '', k));
      const dd = el('dd', '', v);
      dd.dataset.field = k.toLowerCase().replace(/ /g, '-');
      if (k === 'Audit') {
        dd.classList.add('lk-mod-warning');
      }
      table.appendChild(dd);
    }
    node.appendChild(table);
  }

  private _renderNotices(): void {
    const node = this._noticesNode;
    node.replaceChildren();
    const conn = this._connection;
    const notices = conn?.state === 'ready' ? conn.notices : [];
    node.hidden = notices.length === 0;
    const unread = notices.filter(n => !n.read).length;
    const summary = el('summary', 'lk-Notices-title', `Notices (${notices.length}${unread ? `, ${unread} unread` : ''})`);
    node.appendChild(summary);
    for (const notice of notices.slice(0, NOTICES_SHOWN)) {
      const item = el('div', 'lk-Notice');
      item.dataset.noticeId = String(notice.id);
      item.classList.toggle('lk-mod-unread', !notice.read);
      item.classList.toggle('lk-mod-critical', notice.critical);
      item.appendChild(el('div', 'lk-Notice-where', noticeWhere(notice)));
      item.appendChild(el('div', 'lk-Notice-text', notice.text));
      node.appendChild(item);
    }
    if (notices.length > NOTICES_SHOWN) {
      node.appendChild(el('div', 'lk-Notice-more', `${notices.length - NOTICES_SHOWN} older: %logician notices --all`));
    }
    this._readNoticesIfShown();
  }

  /** Notices on screen are read: the kernel is told, so `%logician status` agrees. */
  private _readNoticesIfShown(): void {
    if (this._noticesNode.open && this.isVisible && this._connection?.notices.some(n => !n.read)) {
      this._connection.markNoticesRead();
    }
  }

  private _renderApprovals(): void {
    const node = this._approvalsNode;
    node.replaceChildren();
    const pending = this._connection?.state === 'ready' ? this._connection.pending : [];
    if (!pending.length) {
      return;
    }
    node.appendChild(el('h3', 'lk-Approvals-title', `Waiting for your approval (${pending.length})`));
    for (const req of pending) {
      node.appendChild(this._approvalCard(req));
    }
  }

  private _approvalCard(req: IApprovalRequest): HTMLElement {
    const card = el('div', 'lk-Approval');
    card.dataset.requestId = req.request_id;
    card.appendChild(el('div', 'lk-Approval-tool', `${req.tool}`));
    if (req.description) {
      card.appendChild(el('div', 'lk-Approval-description', req.description));
    }
    if (req.reason) {
      card.appendChild(el('div', 'lk-Approval-reason', req.reason));
    }
    if (req.preview) {
      const pre = el('pre', 'lk-Approval-preview', req.preview.slice(0, 4000));
      card.appendChild(pre);
    }
    const note = el('input', 'lk-Approval-note jp-mod-styled');
    note.placeholder = 'Note for the agent (optional)';
    card.appendChild(note);
    const buttons = el('div', 'lk-Approval-buttons');
    for (const [choice, label, tip, kind] of CHOICE_LABELS) {
      if (choice === 'always_allow' && !req.suggested_rule) {
        continue;
      }
      const button = jpButton(label, kind, choice === 'always_allow' ? `${tip}: ${req.suggested_rule}` : tip);
      button.classList.add(`lk-Approval-${choice}`);
      button.dataset.choice = choice;
      button.addEventListener('click', () => void this._decide(req, choice, note.value, card));
      buttons.appendChild(button);
    }
    card.appendChild(buttons);
    return card;
  }

  private async _decide(req: IApprovalRequest, choice: Choice, note: string, card: HTMLElement): Promise<void> {
    const conn = this._connection;
    if (!conn) {
      return;
    }
    for (const b of Array.from(card.querySelectorAll('button'))) {
      (b as HTMLButtonElement).disabled = true;
    }
    try {
      const answer = await conn.ask(
        { type: 'approval.decide', request_id: req.request_id, choice, note: note || undefined },
        'approval.decided'
      );
      if (!answer.ok) {
        Notification.info('That request was already answered elsewhere.', { autoClose: 4000 });
      }
    } catch (err) {
      Notification.error(`Logician: the decision was not delivered: ${(err as Error).message}`);
      for (const b of Array.from(card.querySelectorAll('button'))) {
        (b as HTMLButtonElement).disabled = false;
      }
    }
  }

  /** The prompt box: a `%%logician` cell per prompt. */
  readonly prompt: PromptBox;
  private _panel: NotebookPanel | null = null;
  private _connection: LogicianConnection | null = null;
  private _pages: FramePages;
  private _frame = 0;
  /** The timeline row keyboard focus is on (or last was). */
  private _focusIndex = 0;
  private _thread: string | null | undefined = undefined;
  private _notebookName: HTMLElement;
  private _stateNode: HTMLElement;
  private _statusNode: HTMLElement;
  private _undo: HTMLButtonElement;
  private _progress: RestoreProgressView;
  private _models: ModelPickerView;
  private _connect: ConnectModelView;
  private _config: ConfigSectionView;
  private _approvalsNode: HTMLElement;
  private _noticesNode: HTMLDetailsElement;
  private _countNode: HTMLElement;
  private _scroller: HTMLElement;
  private _spacer: HTMLElement;
}

/** Preview, confirm (unless the user turned that off), rewind; true when the rewind happened.
 * Shared by the sidebar and the cell command. */
export async function confirmAndRewind(
  connection: LogicianConnection | null,
  target: FrameTarget
): Promise<boolean> {
  if (!connection || connection.state !== 'ready') {
    Notification.warning('Logician: this notebook is not connected to a Logician kernel.', { autoClose: 5000 });
    return false;
  }
  let preview;
  try {
    preview = await connection.ask({ type: 'frames.preview', ...target }, 'frames.preview');
  } catch (err) {
    Notification.error(`Logician: cannot rewind: ${(err as Error).message}`, { autoClose: 8000 });
    return false;
  }
  if (preview.error) {
    Notification.error(`Logician: cannot rewind: ${preview.error}`, { autoClose: 8000 });
    return false;
  }
  let choice: RewindChoice = DEFAULT_REWIND_CHOICE; // no dialog: its defaults
  if (preferences.confirmRewind) {
    const result = await showDialog({
      title: dialogTitle(preview),
      body: new RewindBody(preview, connection),
      buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Rewind' })],
      hasClose: true
    });
    if (!result.button.accept || !result.value) {
      return false;
    }
    choice = result.value;
  }
  try {
    const done = await connection.ask(
      {
        type: 'frames.rewind',
        frame: preview.frame,
        mode: choice.mode,
        force: choice.force,
        include_external: choice.include_external,
        keep_uncertain: choice.keep_uncertain
      },
      'frames.rewind'
    );
    Notification.success(done.headline ?? done.summary.split('\n')[0], { autoClose: 5000 });
    const kept = keptMessage(done.external ?? [], done.conflicts);
    if (kept) {
      // Why a file was not put back belongs in front of the user, not only in the ledger.
      Notification.info(kept, { autoClose: 15000 });
    }
    return true;
  } catch (err) {
    Notification.error(`Logician: the rewind did not happen: ${(err as Error).message}`, { autoClose: 8000 });
    return false;
  }
}

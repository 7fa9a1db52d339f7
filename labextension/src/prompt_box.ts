/**
 * The prompt box at the top of the Logician sidebar: Enter inserts a `%%logician` cell with
 * the prompt below the active cell and runs it, so the notebook stays the record and every
 * prompt is a rewindable frame; ↑ and ↓ walk the recent prompts; *Stop* interrupts the run.
 * `Accel Shift L` focuses it (commands.ts).
 */
import { Notification } from '@jupyterlab/apputils';
import { NotebookActions } from '@jupyterlab/notebook';
import type { NotebookPanel } from '@jupyterlab/notebook';

import { jpButton } from './buttons';
import type { LogicianConnection } from './connection';
import { agentCellSource, PromptHistory } from './prompts';

export class PromptBox {
  readonly node: HTMLElement;

  constructor() {
    this.node = document.createElement('div');
    this.node.className = 'lk-PromptBox';
    this._input = document.createElement('textarea');
    this._input.className = 'lk-PromptBox-input jp-mod-styled';
    this._input.rows = 2;
    this._input.placeholder = 'Ask the agent… (Enter runs it in a new cell, Shift+Enter: new line)';
    this._input.setAttribute('aria-label', 'Prompt for the agent: runs as a %%logician cell');
    this._input.addEventListener('keydown', event => this._onKey(event));
    const buttons = document.createElement('div');
    buttons.className = 'lk-PromptBox-buttons';
    this._run = jpButton('Run', 'accept', 'Insert a %%logician cell with this prompt below the active cell and run it', 'lk-PromptBox-run');
    this._run.addEventListener('click', () => void this.submit());
    this._stop = jpButton('Stop', 'warn', 'Interrupt the running cell (the agent stops)', 'lk-PromptBox-stop');
    this._stop.addEventListener('click', () => void this.stop());
    buttons.append(this._run, this._stop);
    this.node.append(this._input, buttons);
    this._update();
  }

  setNotebook(panel: NotebookPanel | null, connection: LogicianConnection | null): void {
    this._connection?.statusChanged.disconnect(this._update, this);
    this._connection?.stateChanged.disconnect(this._update, this);
    this._panel?.sessionContext.statusChanged.disconnect(this._update, this);
    this._panel = panel;
    this._connection = connection;
    connection?.statusChanged.connect(this._update, this);
    connection?.stateChanged.connect(this._update, this);
    panel?.sessionContext.statusChanged.connect(this._update, this); // busy / idle
    this._update();
  }

  focus(): void {
    this._input.focus();
  }

  /** Run the prompt: a `%%logician` cell below the active cell, executed. */
  async submit(): Promise<boolean> {
    const text = this._input.value;
    const panel = this._panel;
    if (!text.trim()) {
      return false;
    }
    if (!panel || this._connection?.state !== 'ready') {
      Notification.warning('Logician: open a notebook on the Logician kernel to ask the agent.', { autoClose: 5000 });
      return false;
    }
    this._history.add(text);
    this._input.value = '';
    return insertAndRun(panel, agentCellSource(text));
  }

  /** Interrupt the kernel: the run stops as after Kernel > Interrupt. */
  async stop(): Promise<void> {
    await this._panel?.sessionContext.session?.kernel?.interrupt();
  }

  private _onKey(event: KeyboardEvent): void {
    const input = this._input;
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      void this.submit();
    } else if (event.key === 'ArrowUp' && !input.value.slice(0, input.selectionStart).includes('\n')) {
      const previous = this._history.up(input.value);
      if (previous !== null) {
        event.preventDefault();
        input.value = previous;
      }
    } else if (event.key === 'ArrowDown' && !input.value.slice(input.selectionEnd).includes('\n')) {
      const next = this._history.down();
      if (next !== null) {
        event.preventDefault();
        input.value = next;
      }
    }
  }

  private _update(): void {
    const ready = this._connection?.state === 'ready';
    // Something to stop: a cell runs (the status says so; the kernel's own busy/idle is not
    // enough: an answer on the comm's subshell reports idle while the main shell works).
    const status = this._connection?.status;
    const running =
      ready &&
      (status?.phase === 'turn' ||
        !!status?.running_cell ||
        this._panel?.sessionContext.session?.kernel?.status === 'busy');
    this._input.disabled = !ready;
    this._run.disabled = !ready;
    this._stop.disabled = !running;
    this.node.dataset.running = running ? 'true' : 'false';
  }

  private _input: HTMLTextAreaElement;
  private _run: HTMLButtonElement;
  private _stop: HTMLButtonElement;
  private _panel: NotebookPanel | null = null;
  private _connection: LogicianConnection | null = null;
  private _history = new PromptHistory();
}

/** Insert a code cell holding `source` below the active cell (made active) and run it: the
 * prompt box's cells, and the *Fix with Logician* button's. False when no cell could be made. */
export async function insertAndRun(panel: NotebookPanel, source: string): Promise<boolean> {
  const notebook = panel.content;
  NotebookActions.insertBelow(notebook); // below the active cell, and made active
  NotebookActions.changeCellType(notebook, 'code');
  const cell = notebook.activeCell;
  if (!cell) {
    return false;
  }
  cell.model.sharedModel.setSource(source);
  await NotebookActions.run(notebook, panel.sessionContext);
  return true;
}

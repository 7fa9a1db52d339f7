/**
 * *Fix with Logician*: a button under a code cell's error output, in notebooks on a Logician
 * kernel only, that inserts a `%logician fix` cell below the failing cell and runs it (the
 * agent explains and fixes the error, as its own rewindable frame); and the palette command
 * "Fix the last error with Logician". Which fix cell a button asks for is `fix.ts`'s; this
 * module only watches outputs and places buttons. It never edits a cell the user wrote.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { ICommandPalette } from '@jupyterlab/apputils';
import { Notification } from '@jupyterlab/apputils';
import type { Cell, ICellModel, ICodeCellModel } from '@jupyterlab/cells';
import { NotebookActions } from '@jupyterlab/notebook';
import type { INotebookTracker, Notebook, NotebookPanel } from '@jupyterlab/notebook';
import type { LabIcon } from '@jupyterlab/ui-components';

import { jpButton } from './buttons';
import type { LogicianConnection } from './connection';
import { fixCellSource, newestErrorIndex } from './fix';
import type { CellErrorInfo } from './fix';
import { insertAndRun } from './prompt_box';

export const FIX_COMMAND_ID = 'logician:fix-last-error';
export const FIX_BUTTON_CLASS = 'lk-FixButton';

function hasError(model: ICellModel): boolean {
  if (model.type !== 'code') {
    return false;
  }
  const outputs = (model as ICodeCellModel).outputs;
  for (let i = 0; i < outputs.length; i++) {
    if (outputs.get(i).type === 'error') {
      return true;
    }
  }
  return false;
}

function errorInfo(notebook: Notebook): CellErrorInfo[] {
  return notebook.widgets.map(cell => ({
    id: cell.model.id,
    executionCount: cell.model.type === 'code' ? (cell.model as ICodeCellModel).executionCount : null,
    hasError: hasError(cell.model)
  }));
}

/** Ask the agent to fix the error of the cell at `index`: a fix cell below it, run. */
export async function fixErrorOf(panel: NotebookPanel, index: number): Promise<boolean> {
  const notebook = panel.content;
  const source = fixCellSource(errorInfo(notebook), index);
  notebook.activeCellIndex = index;
  notebook.deselectAll();
  return insertAndRun(panel, source);
}

/** The buttons of one notebook: one under each error output while the kernel is Logician. */
export class FixButtons {
  constructor(
    readonly panel: NotebookPanel,
    readonly connection: LogicianConnection
  ) {
    connection.stateChanged.connect(this._apply, this);
    NotebookActions.executed.connect(this._onExecuted, this);
    panel.content.model?.cells.changed.connect(this._apply, this);
    panel.disposed.connect(() => this.dispose());
    this._apply();
  }

  dispose(): void {
    this.connection.stateChanged.disconnect(this._apply, this);
    NotebookActions.executed.disconnect(this._onExecuted, this);
  }

  private _onExecuted(_: unknown, args: { notebook: Notebook }): void {
    if (args.notebook === this.panel.content) {
      this._apply();
    }
  }

  private _apply(): void {
    const on = this.connection.state === 'ready';
    for (const cell of this.panel.content.widgets) {
      this._watch(cell.model);
      this._applyTo(cell, on && hasError(cell.model));
    }
  }

  /** Follow a code cell's outputs: an error appears or is cleared without a run ending. */
  private _watch(model: ICellModel): void {
    if (model.type !== 'code' || this._watched.has(model)) {
      return;
    }
    this._watched.add(model);
    (model as ICodeCellModel).outputs.changed.connect(() => {
      const cell = this.panel.content.widgets.find(w => w.model === model);
      if (cell) {
        this._applyTo(cell, this.connection.state === 'ready' && hasError(model));
      }
    });
  }

  private _applyTo(cell: Cell, show: boolean): void {
    const area = (cell as Cell & { outputArea?: { node: HTMLElement } }).outputArea?.node;
    let button = this._buttons.get(cell);
    if (!show || !area) {
      button?.remove();
      return;
    }
    if (!button) {
      const made = jpButton(
        'Fix with Logician',
        'accept',
        'Insert a %logician fix cell below this cell and run it: the agent explains and fixes this error',
        FIX_BUTTON_CLASS
      );
      made.addEventListener('click', () => void this._fix(cell));
      this._buttons.set(cell, made);
      button = made;
    }
    if (area.lastElementChild !== button) {
      area.appendChild(button); // after the outputs, even when one was added since
    }
  }

  private async _fix(cell: Cell): Promise<void> {
    const index = this.panel.content.widgets.indexOf(cell);
    if (index >= 0) {
      await fixErrorOf(this.panel, index);
    }
  }

  private _buttons = new WeakMap<Cell, HTMLButtonElement>();
  private _watched = new WeakSet<ICellModel>();
}

/** The palette command: a fix cell below the cell whose error ran last (below the active
 * cell when no cell shows one: the kernel may still know an error whose output was cleared,
 * and says so when it knows none). */
export function addFixCommand(
  app: JupyterFrontEnd,
  tracker: INotebookTracker,
  connectionFor: (panel: NotebookPanel) => LogicianConnection,
  palette: ICommandPalette | null,
  icon: LabIcon
): void {
  app.commands.addCommand(FIX_COMMAND_ID, {
    label: 'Fix the last error with Logician',
    caption: 'Insert a %logician fix cell below the cell that failed last and run it: the agent explains and fixes the error',
    icon,
    isEnabled: () => {
      const panel = tracker.currentWidget;
      return !!panel && connectionFor(panel).state === 'ready';
    },
    execute: async () => {
      const panel = tracker.currentWidget;
      if (!panel || connectionFor(panel).state !== 'ready') {
        Notification.warning('Logician: open a notebook on the Logician kernel to fix an error.', { autoClose: 5000 });
        return false;
      }
      const index = newestErrorIndex(errorInfo(panel.content));
      if (index >= 0) {
        return fixErrorOf(panel, index);
      }
      return insertAndRun(panel, fixCellSource([], -1));
    }
  });
  palette?.addItem({ command: FIX_COMMAND_ID, category: 'Logician' });
}

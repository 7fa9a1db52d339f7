/**
 * Greys out the cells of rewound frames in one notebook, with a tooltip saying when and by
 * which rewind; a cell that runs again is live again.
 */
import { NotebookActions } from '@jupyterlab/notebook';
import type { Notebook, NotebookPanel } from '@jupyterlab/notebook';
import { CodeCell } from '@jupyterlab/cells';
import type { Cell } from '@jupyterlab/cells';
import { Signal } from '@lumino/signaling';

import type { ConnectionState, LogicianConnection } from './connection';
import type { KernelMessage } from './protocol';
import { RewoundCells } from './rewound';

export const REWOUND_CLASS = 'lk-mod-rewound';

/** Run the panel's code cells of these ids, in order (`notebook_tools.ts`: the cells the
 * agent asked to run): each its own execute request, so its own frame; an error stops the
 * ones after it, as Run All does. The user's selection and edit mode are left alone. */
export async function runCellsById(panel: NotebookPanel, ids: string[]): Promise<void> {
  for (const id of ids) {
    const cell = panel.content.widgets.find(w => w.model.id === id);
    if (!(cell instanceof CodeCell)) {
      continue;
    }
    const reply = await CodeCell.execute(cell, panel.sessionContext).catch(() => undefined);
    // CodeCell.execute, unlike the notebook's Run commands, tells NotebookActions.executed
    // nothing: a rewound cell the agent runs again must still turn live.
    agentRan.emit({ notebook: panel.content, cell });
    if (!reply || reply.content.status !== 'ok') {
      return;
    }
  }
}

/** A cell `runCellsById` ran (the notebook's own runs are NotebookActions.executed). */
export const agentRan = new Signal<typeof runCellsById, { notebook: Notebook; cell: Cell }>(
  runCellsById
);

/** How many of the newest frames are read to rebuild the greying when a notebook connects. */
export const RECENT_FRAMES = 500;

export class CellMarker {
  constructor(
    readonly panel: NotebookPanel,
    readonly connection: LogicianConnection
  ) {
    connection.announced.connect(this._onAnnounced, this);
    connection.stateChanged.connect(this._onState, this);
    NotebookActions.executed.connect(this._onExecuted, this);
    agentRan.connect(this._onExecuted, this);
    panel.content.model?.cells.changed.connect(this._apply, this);
    panel.disposed.connect(() => this.dispose());
    this._onState(connection, connection.state);
  }

  dispose(): void {
    this.connection.announced.disconnect(this._onAnnounced, this);
    this.connection.stateChanged.disconnect(this._onState, this);
    NotebookActions.executed.disconnect(this._onExecuted, this);
    agentRan.disconnect(this._onExecuted, this);
  }

  private async _onState(_: LogicianConnection, state: ConnectionState): Promise<void> {
    if (state !== 'ready') {
      return;
    }
    try {
      const page = await this.connection.ask({ type: 'frames.list', offset: 0, limit: RECENT_FRAMES }, 'frames');
      this._marks.resetFromRows(page.rows);
      this._apply();
    } catch {
      // the sidebar reports connection problems; greying is best effort
    }
  }

  private _onAnnounced(_: LogicianConnection, msg: KernelMessage): void {
    if (msg.type === 'frames.rewound') {
      this._marks.rewound(msg.cell_ids, msg.frames, msg.at, msg.by);
      this._apply();
    } else if (msg.type === 'frames.undone') {
      this._marks.undone(msg.cell_ids, msg.undoes);
      this._apply();
    }
  }

  private _onExecuted(_: unknown, args: { notebook: Notebook; cell: Cell }): void {
    if (args.notebook !== this.panel.content) {
      return;
    }
    this._marks.ran(args.cell.model.id);
    this._applyTo(args.cell);
  }

  private _apply(): void {
    for (const cell of this.panel.content.widgets) {
      this._applyTo(cell);
    }
  }

  private _applyTo(cell: Cell): void {
    const tip = this._marks.tooltip(cell.model.id);
    cell.toggleClass(REWOUND_CLASS, tip !== undefined);
    if (tip !== undefined) {
      cell.node.title = tip;
      cell.node.dataset.logicianRewound = 'true';
    } else if (cell.node.dataset.logicianRewound) {
      cell.node.removeAttribute('title');
      delete cell.node.dataset.logicianRewound;
    }
  }

  private _marks = new RewoundCells();
}

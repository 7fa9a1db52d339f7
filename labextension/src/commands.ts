/**
 * Logician's commands: in the command palette (category "Logician") with default shortcuts
 * (schema/plugin.json), and the file browser kept current after rewinds, undos and cells.
 *
 *   Rewind the last cell           Accel Shift Alt Z
 *   Rewind to before this cell     Accel Shift Alt R   (also in the cell's context menu)
 *   Undo the last rewind           Accel Shift Alt U   (off, with the reason, when nothing to undo)
 *   Resume the interrupted rewind  Accel Shift Alt E
 *   Show the Logician sidebar      Accel Shift Alt O
 *   Ask the agent (prompt box)     Accel Shift L  (over the Launcher's: more specific selector)
 *   Fix the last error with Logician  Accel Shift Alt F  (fix_button.ts)
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { ICommandPalette } from '@jupyterlab/apputils';
import { Notification } from '@jupyterlab/apputils';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { LabIcon } from '@jupyterlab/ui-components';

import type { LogicianConnection } from './connection';
import { lastActive, undoRefused } from './format';
import type { KernelMessage } from './protocol';
import { confirmAndRewind, LogicianSidebar } from './sidebar';

export namespace CommandIDs {
  export const rewindCell = 'logician:rewind-before-cell';
  export const rewindLast = 'logician:rewind-last-cell';
  export const undo = 'logician:undo-rewind';
  export const resume = 'logician:resume-rewind';
  export const openSidebar = 'logician:open-sidebar';
  export const focusPrompt = 'logician:focus-prompt';
}

/** File browser refreshes follow these: a rewind or an undo changed the files under the Lab.
 * (Not after every cell: a refresh then raced a save the Lab reported during the cell, and
 * the kernel no longer attributed it to the user; the browser's own polling shows a cell's
 * writes.) */
const CHANGES_FILES: KernelMessage['type'][] = ['frames.rewound', 'frames.undone'];

/** Refresh the file browser after a rewind or an undo, and
 * keep *Undo the last rewind* enabled only while there is a rewind to undo. */
export function watchConnection(app: JupyterFrontEnd, connection: LogicianConnection): void {
  connection.announced.connect((_, msg) => {
    if (CHANGES_FILES.includes(msg.type) && app.commands.hasCommand('filebrowser:refresh')) {
      void app.commands.execute('filebrowser:refresh').catch(() => undefined);
    }
  });
  connection.statusChanged.connect(() => app.commands.notifyCommandChanged(CommandIDs.undo));
}

export function addCommands(
  app: JupyterFrontEnd,
  tracker: INotebookTracker,
  sidebar: LogicianSidebar,
  connectionFor: (panel: NotebookPanel) => LogicianConnection,
  palette: ICommandPalette | null,
  icon: LabIcon
): void {
  const current = (): LogicianConnection | null => {
    const panel = tracker.currentWidget;
    return panel ? connectionFor(panel) : null;
  };
  const ready = () => current()?.state === 'ready';
  const { commands } = app;

  commands.addCommand(CommandIDs.rewindCell, {
    label: 'Rewind to before this cell',
    caption: 'Restore the files, variables and conversation to just before this cell last ran (Logician)',
    icon,
    isEnabled: () => ready() && !!tracker.activeCell,
    execute: async () => {
      const cell = tracker.activeCell;
      if (!cell) {
        return false;
      }
      return confirmAndRewind(current(), { cell_id: cell.model.id });
    }
  });
  commands.addCommand(CommandIDs.rewindLast, {
    label: 'Rewind the last cell',
    caption: 'Restore the files, variables and conversation to just before the last cell that did work (Logician)',
    icon,
    isEnabled: ready,
    execute: async () => {
      const conn = current();
      if (!conn || conn.state !== 'ready') {
        return confirmAndRewind(conn, { frame: 1 }); // says "not connected"
      }
      try {
        const page = await conn.ask({ type: 'frames.list', offset: 0, limit: 50 }, 'frames');
        const last = lastActive(page.rows);
        if (!last) {
          Notification.info('Logician: no cell left to rewind in this notebook.', { autoClose: 5000 });
          return false;
        }
        return confirmAndRewind(conn, { frame: last.frame });
      } catch (err) {
        Notification.error(`Logician: cannot rewind: ${(err as Error).message}`, { autoClose: 8000 });
        return false;
      }
    }
  });
  commands.addCommand(CommandIDs.undo, {
    label: 'Undo the last rewind',
    caption: 'Take back the most recent rewind: files, variables and conversation as they were (Logician)',
    isEnabled: () => {
      const conn = current();
      return conn?.state === 'ready' && !!conn.status && undoRefused(conn.status) === null;
    },
    execute: () => sidebar.undoRewind()
  });
  commands.addCommand(CommandIDs.resume, {
    label: 'Resume the interrupted rewind',
    caption: 'Finish a rewind that a crash or a failed file cut short (Logician)',
    isEnabled: ready,
    execute: () => sidebar.resumeRewind()
  });
  commands.addCommand(CommandIDs.openSidebar, {
    label: 'Show the Logician sidebar',
    execute: () => app.shell.activateById(sidebar.id)
  });
  commands.addCommand(CommandIDs.focusPrompt, {
    label: 'Ask the agent',
    caption: 'Focus the prompt box of the Logician sidebar: Enter runs the prompt in a new %%logician cell',
    execute: () => {
      app.shell.activateById(sidebar.id);
      sidebar.prompt.focus();
    }
  });
  // The enabled state follows the status (undo) and the connection.
  tracker.currentChanged.connect(() => commands.notifyCommandChanged());

  app.contextMenu.addItem({ command: CommandIDs.rewindCell, selector: '.jp-Notebook .jp-Cell', rank: 12 });
  if (palette) {
    for (const command of [
      CommandIDs.rewindLast,
      CommandIDs.rewindCell,
      CommandIDs.undo,
      CommandIDs.resume,
      CommandIDs.openSidebar,
      CommandIDs.focusPrompt
    ]) {
      palette.addItem({ command, category: 'Logician' });
    }
  }
}

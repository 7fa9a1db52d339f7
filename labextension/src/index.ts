/**
 * Logician Kernel's JupyterLab extension: a sidebar (frame timeline, rewind, approvals,
 * runtime status), a status bar item, a cell command "Rewind to before this cell", and greyed
 * cells for rewound frames. It speaks the kernel's `logician` comm (see `protocol.ts`).
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStatusBar } from '@jupyterlab/statusbar';
import { LabIcon } from '@jupyterlab/ui-components';

import { addCallRenderer } from './call_output';
import { CellMarker, runCellsById } from './cells';
import { addCommands, watchConnection } from './commands';
import { LogicianConnection } from './connection';
import { type DiffLayout, setDiffLayout, setDiffOpener } from './diff_view';
import { addFixCommand, FixButtons } from './fix_button';
import { NotebookTools } from './notebook_tools';
import { LogicianSidebar } from './sidebar';
import { LogicianStatusItem } from './statusbar';

const PLUGIN_ID = 'logician-kernel:plugin';

export { CommandIDs } from './commands';

const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" viewBox="0 0 24 24"><path class="jp-icon3" fill="#616161" d="M12 3a9 9 0 1 1-8.5 6h2.2A7 7 0 1 0 12 5v3L7.5 4 12 0z"/><circle class="jp-icon3" fill="#616161" cx="12" cy="12" r="2.2"/></svg>`;

export const logicianIcon = new LabIcon({ name: 'logician-kernel:rewind', svgstr: ICON_SVG });

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'Logician sidebar: frame timeline, rewind, approvals and runtime status.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [IStatusBar, ICommandPalette, ISettingRegistry, IEditorLanguageRegistry],
  activate: async (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    statusBar: IStatusBar | null,
    palette: ICommandPalette | null,
    settings: ISettingRegistry | null,
    languages: IEditorLanguageRegistry | null
  ) => {
    let pageSize = 100;
    let diffPrefs: { layout: DiffLayout; save: (value: DiffLayout) => void } | null = null;
    if (settings) {
      try {
        const loaded = await settings.load(PLUGIN_ID);
        pageSize = (loaded.get('pageSize').composite as number) ?? pageSize;
        diffPrefs = {
          layout: loaded.get('diffLayout').composite as DiffLayout,
          // the diff tab's toggle is remembered for the next tab and the next session
          save: value => void loaded.set('diffLayout', value).catch(() => undefined)
        };
        // a change in the Settings editor applies to the next diff drawn
        loaded.changed.connect(() => setDiffLayout(loaded.get('diffLayout').composite as DiffLayout));
      } catch {
        // defaults
      }
    }
    const connections = new WeakMap<NotebookPanel, LogicianConnection>();
    const live = new Set<LogicianConnection>();
    const connectionFor = (panel: NotebookPanel): LogicianConnection => {
      let conn = connections.get(panel);
      if (!conn) {
        const created = new LogicianConnection(panel.sessionContext);
        connections.set(panel, created);
        live.add(created);
        new CellMarker(panel, created);
        new NotebookTools(panel, created, runCellsById); // the agent's notebook tools answer here
        new FixButtons(panel, created); // *Fix with Logician* under error outputs
        addCallRenderer(panel, created); // *Rewind this call* in agent cells' outputs
        watchConnection(app, created);
        panel.disposed.connect(() => {
          live.delete(created);
          created.dispose();
        });
        conn = created;
      }
      return conn;
    };
    // Every document the Lab saves is the user's change: each Logician kernel is told, so a
    // rewind never reverts it (a kernel ignores paths outside its workspace).
    app.serviceManager.contents.fileChanged.connect((_, change) => {
      const saved = savedPath(change, p => app.serviceManager.contents.localPath(p));
      if (saved) {
        for (const conn of live) {
          conn.reportSave(saved, new Date().toISOString());
        }
      }
    });

    setDiffOpener(tab => app.shell.add(tab, 'main'), languages, diffPrefs);
    const sidebar = new LogicianSidebar({ pageSize });
    sidebar.title.icon = logicianIcon;
    app.shell.add(sidebar, 'right', { rank: 600 });

    const statusItem = new LogicianStatusItem(() => app.shell.activateById(sidebar.id));
    if (statusBar) {
      statusBar.registerStatusItem('logician-kernel:status', {
        item: statusItem,
        align: 'left',
        rank: 4,
        isActive: () => statusItem.visibleNow,
        activeStateChanged: statusItem.activeStateChanged
      });
    }

    const follow = (panel: NotebookPanel | null) => {
      const conn = panel ? connectionFor(panel) : null;
      sidebar.setNotebook(panel, conn);
      statusItem.setConnection(conn);
    };
    tracker.widgetAdded.connect((_, panel) => void connectionFor(panel));
    tracker.currentChanged.connect((_, panel) => follow(panel));
    follow(tracker.currentWidget);

    addCommands(app, tracker, sidebar, connectionFor, palette, logicianIcon);
    addFixCommand(app, tracker, connectionFor, palette, logicianIcon);
  }
};

/** The server-relative path a contents change saved; null for anything but a save. */
export function savedPath(
  change: { type: string; newValue?: { path?: string } | null },
  localPath: (path: string) => string = p => p
): string | null {
  if (change.type !== 'save' || !change.newValue?.path) {
    return null;
  }
  return localPath(change.newValue.path);
}

export default plugin;

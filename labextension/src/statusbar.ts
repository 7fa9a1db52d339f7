/**
 * The status bar item: phase and tokens/cost of the active notebook's Logician kernel.
 */
import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import type { LogicianConnection } from './connection';
import { statusBarText } from './format';
import { RestoreProgressView } from './progress';

export class LogicianStatusItem extends Widget {
  constructor(onClick: () => void) {
    super();
    this.addClass('lk-StatusItem');
    this.node.title = 'Logician: open the sidebar';
    this.node.addEventListener('click', onClick);
    this._text = document.createElement('span');
    this._text.className = 'lk-StatusItem-text';
    this._progress = new RestoreProgressView(document.createElement('span'), true);
    this.node.append(this._text, this._progress.node);
    this.setConnection(null);
  }

  setConnection(connection: LogicianConnection | null): void {
    if (this._connection) {
      this._connection.statusChanged.disconnect(this._update, this);
      this._connection.stateChanged.disconnect(this._update, this);
    }
    this._connection = connection;
    this._progress.setConnection(connection);
    if (connection) {
      connection.statusChanged.connect(this._update, this);
      connection.stateChanged.connect(this._update, this);
    }
    this._update();
  }

  /** Shown only for a notebook on a Logician kernel. */
  get visibleNow(): boolean {
    return this._connection?.state === 'ready';
  }

  private _update(): void {
    const conn = this._connection;
    const ready = conn?.state === 'ready';
    this._text.textContent = ready ? statusBarText(conn.status) : '';
    this.node.dataset.phase = ready ? conn.status?.phase ?? 'idle' : '';
    this._changed?.();
    if (this.visibleNow !== this._shown) {
      this._shown = this.visibleNow;
      this._activeStateChanged.emit(undefined);
    }
  }

  /** The status bar shows the item again when this fires (a notebook's kernel became a ready
   * Logician kernel, or stopped being one): without it the item stayed hidden until the
   * next tab switch. */
  get activeStateChanged(): ISignal<this, void> {
    return this._activeStateChanged;
  }

  /** Called when visibility may have changed (the status bar re-checks `isActive`). */
  onChange(callback: () => void): void {
    this._changed = callback;
  }

  private _text: HTMLElement;
  private _progress: RestoreProgressView;
  private _connection: LogicianConnection | null = null;
  private _changed: (() => void) | null = null;
  private _shown = false;
  private _activeStateChanged = new Signal<this, void>(this);
}

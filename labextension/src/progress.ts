/**
 * The bar a long rewind, undo or resume shows while it restores paths ("Rewinding: restoring
 * 12,400 / 20,000 files"), and the first snapshot of a big workspace ("First snapshot: scanning
 * 12,400 / 60,000 files (20%)"), in the sidebar and in the status bar. It follows the kernel's
 * `progress` messages (a few a second) and hides when the operation has finished.
 */
import type { LogicianConnection } from './connection';
import { progressFraction, progressText } from './format';
import type { IRestoreProgress } from './protocol';

/** The status bar's words: the first snapshot's count ("scanning 12,400 / 60,000 files (20%)"),
 * a large file's copy ("capturing big.bin 120 / 300 MB"), else the percentage. */
function compactText(progress: IRestoreProgress, text: string): string {
  if (progress.operation !== 'rewind' && progress.operation !== 'undo' && progress.operation !== 'resume') {
    return text.slice(text.indexOf(': ') + 2);
  }
  return `${Math.round(progressFraction(progress) * 100)}%`;
}

export class RestoreProgressView {
  /** `compact`: the status bar's short form (a percentage and a thin bar). */
  constructor(readonly node: HTMLElement, private readonly _compact = false) {
    node.classList.add('lk-Progress');
    node.setAttribute('role', 'status');
    node.setAttribute('aria-live', 'polite');
    this._text = document.createElement('span');
    this._text.className = 'lk-Progress-text';
    this._bar = document.createElement('progress');
    this._bar.className = 'lk-Progress-bar';
    node.append(this._text, this._bar);
    this.render(null);
  }

  setConnection(connection: LogicianConnection | null): void {
    this._connection?.progressChanged.disconnect(this._changed, this);
    this._connection = connection;
    connection?.progressChanged.connect(this._changed, this);
    this.render(connection?.progress ?? null);
  }

  render(progress: IRestoreProgress | null): void {
    this.node.hidden = progress === null;
    if (progress === null) {
      this._text.textContent = '';
      return;
    }
    const text = progressText(progress);
    this._text.textContent = this._compact ? compactText(progress, text) : text;
    this.node.title = text;
    this._bar.setAttribute('aria-label', text);
    if (progress.total > 0) {
      this._bar.max = progress.total;
      this._bar.value = progress.done;
    } else {
      this._bar.removeAttribute('value'); // indeterminate: nothing to count
    }
    this.node.dataset.done = String(progress.done);
    this.node.dataset.total = String(progress.total);
  }

  private _changed(_: LogicianConnection, progress: IRestoreProgress | null): void {
    this.render(progress);
  }

  private _connection: LogicianConnection | null = null;
  private _text: HTMLElement;
  private _bar: HTMLProgressElement;
}

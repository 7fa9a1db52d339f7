/**
 * *Rewind this call* in the agent cell's own output: the renderer of the kernel's
 * `application/vnd.logician.call-rewind+json` outputs (`call_buttons.py`), one per tool call
 * that changed files. A line with the call's words and a button that asks what it will restore
 * (the sidebar dialog's words and dialog, `call_rewind.ts`), rewinds over the comm
 * (`frames.rewind_call`) and says the result in place. The call's state is read from the kernel
 * (`frames.calls`) when shown and after every rewind or undo, so a rewound call says `Rewound`
 * (a stored notebook carries no widget state, only this data and a `text/plain` hint).
 * Every button is off while a cell runs (`busyReason`), with a tooltip saying why.
 */
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import type { NotebookPanel } from '@jupyterlab/notebook';
import { Widget } from '@lumino/widgets';

import { jpButton } from './buttons';
import { confirmAndRewindCall, watchBusy } from './call_rewind';
import { callLabel, callOfOutput, callTooltip } from './call_words';
import type { LogicianConnection } from './connection';
import type { ICallLine } from './protocol';

export const CALL_MIME = 'application/vnd.logician.call-rewind+json';

const asking = new WeakMap<LogicianConnection, Map<number, Promise<ICallLine[]>>>();

/** The calls of `frame`: one request at a time per frame, however many outputs ask (every
 * call output of a notebook asks again after each `frames.changed`). */
function callsOf(connection: LogicianConnection, frame: number): Promise<ICallLine[]> {
  let byFrame = asking.get(connection);
  if (!byFrame) {
    byFrame = new Map();
    asking.set(connection, byFrame);
  }
  let pending = byFrame.get(frame);
  if (!pending) {
    const mine = byFrame;
    pending = connection.ask({ type: 'frames.calls', frame }, 'frames.calls').then(m => m.calls);
    mine.set(frame, pending);
    const forget = () => void mine.delete(frame);
    pending.then(forget, forget);
  }
  return pending;
}

/** One call's line and button in the cell's output. */
export class CallOutput extends Widget implements IRenderMime.IRenderer {
  constructor(private readonly _connection: LogicianConnection) {
    super();
    this.addClass('lk-CallOutput');
    this._label = document.createElement('code');
    this._label.className = 'lk-CallOutput-words';
    this._button = jpButton('Rewind this call', 'warn', '', 'lk-CallOutput-rewind');
    this._button.addEventListener('click', () => void this._click());
    this._result = document.createElement('div');
    this._result.className = 'lk-CallOutput-result';
    const row = document.createElement('div');
    row.className = 'lk-CallOutput-row';
    row.append(this._label, this._button);
    this.node.append(row, this._result);
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const call = callOfOutput(model.data[CALL_MIME]);
    if (!call) {
      this._label.textContent = 'Logician: this output is not a call the kernel described';
      this._button.hidden = true;
      return;
    }
    this._call = call;
    this._known = false;
    this.node.dataset.call = call.id;
    this._label.textContent = `▸ ${callLabel(call)}`;
    if (!this._unwatch) {
      this._unwatch = watchBusy(this._connection, why => {
        this._busy = why;
        this._show();
      });
      this._connection.announced.connect(this._onAnnounced, this);
      this._connection.stateChanged.connect(this._onState, this);
    }
    await this._refresh();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._unwatch?.();
    this._connection.announced.disconnect(this._onAnnounced, this);
    this._connection.stateChanged.disconnect(this._onState, this);
    super.dispose();
  }

  /** A (re)connected kernel: the call's state is asked again (a reopened notebook's calls). */
  private _onState(_: unknown, state: string): void {
    if (state === 'ready') {
      void this._refresh();
    }
  }

  private _onAnnounced(_: unknown, msg: { type: string }): void {
    if (msg.type === 'frames.changed' || msg.type === 'frames.undone' || msg.type === 'frames.rewound') {
      void this._refresh();
    }
  }

  /** The call as the kernel knows it now (rewound, still undoable). */
  private async _refresh(): Promise<(ICallLine & { frame: number }) | null> {
    const call = this._call;
    if (!call || this._connection.state !== 'ready') {
      return null;
    }
    try {
      const now = (await callsOf(this._connection, call.frame)).find(c => c.id === call.id);
      this._call = now
        ? { ...now, frame: call.frame }
        : { ...call, undoable: false, why_not: 'the kernel no longer knows this call' };
    } catch {
      return null; // the state stays as shown; the next announcement or reconnection asks again
    }
    this._known = true;
    this._show();
    return this._call;
  }

  private _show(): void {
    const call = this._call;
    if (!call) {
      return;
    }
    this._button.textContent = call.rewound ? 'Rewound' : 'Rewind this call';
    this.node.dataset.state = call.rewound ? 'rewound' : call.undoable ? 'ready' : 'not-undoable';
    if (call.rewound) {
      this._button.disabled = true;
      this._button.title = `Call ${call.id} was rewound; Undo rewind (or %logician undo) takes it back`;
    } else if (this._busy) {
      this._button.disabled = true;
      this._button.title = this._busy;
    } else if (!this._known) {
      this._button.disabled = true;
      this._button.title = 'Asking the kernel whether this call can be rewound…';
    } else {
      this._button.disabled = !call.undoable || this._working;
      this._button.title = callTooltip(call);
    }
  }

  private async _click(): Promise<void> {
    const call = this._call;
    // Not read again from the kernel first: that request itself would flash the kernel busy.
    // Another frontend's rewind or undo is announced, and the kernel refuses a stale one.
    if (!call || call.rewound || !call.undoable || this._busy || this._working || !this._known) {
      return;
    }
    this._working = true;
    this._show();
    try {
      const done = await confirmAndRewindCall(this._connection, call);
      if (done) {
        this._result.textContent = done.headline;
        this._call = { ...call, rewound: true, undoable: false };
      } else {
        void this._refresh(); // refused (rewound elsewhere, changed since): show why
      }
    } finally {
      this._working = false;
      this._show();
    }
  }

  private _call: (ICallLine & { frame: number }) | null = null;
  private _busy: string | null = null;
  private _working = false;
  /** Whether the state shown is the kernel's (asked since this output was rendered). */
  private _known = false;
  private _unwatch: (() => void) | null = null;
  private _label: HTMLElement;
  private _button: HTMLButtonElement;
  private _result: HTMLElement;
}

/** Render the call outputs in `panel` (its own registry: the renderer needs its connection). */
export function addCallRenderer(panel: NotebookPanel, connection: LogicianConnection): void {
  const registry = panel.content.rendermime;
  if (registry.getFactory(CALL_MIME)) {
    return;
  }
  registry.addFactory(
    {
      safe: true,
      mimeTypes: [CALL_MIME],
      defaultRank: 50,
      createRenderer: () => new CallOutput(connection)
    },
    50
  );
}

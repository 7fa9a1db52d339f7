/**
 * *Rewind this call*: a frame's tool calls, each with a button that puts back what that one
 * call changed (`frames.rewind_call`, the same recorded, undoable rewind as
 * `%logician rewind --call ID`). Opened from a frame of the sidebar's timeline (its `Calls`
 * button); asks before rewinding; the result is a toast, and the timeline reads its frames
 * again (`rewound`). The words are `call_words.ts`'s.
 */

import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { jpButton } from './buttons';
import { busyReason, callLabel, callTooltip, confirmText, resultText } from './call_words';
import type { LogicianConnection } from './connection';
import type { ICallLine, ICallRewound } from './protocol';

const NOT_CONNECTED = 'This notebook is not connected to a Logician kernel: the call cannot be rewound now';

/** Call `apply` with why the buttons are off (null: on) now and whenever it may change;
 * returns the function that stops watching. */
export function watchBusy(connection: LogicianConnection, apply: (why: string | null) => void): () => void {
  const update = () => {
    if (connection.state !== 'ready') {
      apply(NOT_CONNECTED);
      return;
    }
    apply(busyReason(connection.status, connection.sessionContext.session?.kernel?.status));
  };
  connection.statusChanged.connect(update);
  connection.stateChanged.connect(update);
  connection.sessionContext.statusChanged.connect(update);
  update();
  return () => {
    connection.statusChanged.disconnect(update);
    connection.stateChanged.disconnect(update);
    connection.sessionContext.statusChanged.disconnect(update);
  };
}

function line(call: ICallLine, onRewind: (call: ICallLine, button: HTMLButtonElement) => void): HTMLElement {
  const node = document.createElement('div');
  node.className = 'lk-CallLine';
  node.dataset.call = call.id;
  const label = document.createElement('code');
  label.className = 'lk-CallLine-words';
  label.textContent = callLabel(call);
  node.appendChild(label);
  const button = jpButton(call.rewound ? 'Rewound' : 'Rewind this call', 'warn', callTooltip(call), 'lk-CallLine-rewind');
  button.disabled = !call.undoable;
  button.dataset.undoable = call.undoable ? 'true' : 'false';
  button.addEventListener('click', () => onRewind(call, button));
  node.appendChild(button);
  return node;
}

/** Ask, then rewind one call; what the kernel answered when it was rewound, else null. */
export async function confirmAndRewindCall(connection: LogicianConnection, call: ICallLine): Promise<ICallRewound | null> {
  const { title, lines } = confirmText(call);
  const body = document.createElement('pre');
  body.className = 'lk-CallConfirm';
  body.textContent = lines.join('\n');
  const answer = await showDialog({
    title,
    body: new Widget({ node: body }),
    buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Rewind this call' })],
    hasClose: true
  });
  if (!answer.button.accept) {
    return null;
  }
  try {
    const done = await connection.ask({ type: 'frames.rewind_call', call_id: call.id }, 'frames.rewind_call');
    const { headline, left } = resultText(done);
    Notification.success(headline, { autoClose: 5000 });
    if (left) {
      Notification.info(left, { autoClose: 15000 });
    }
    return done;
  } catch (err) {
    Notification.error(`Logician: the call was not rewound: ${(err as Error).message}`, { autoClose: 8000 });
    return null;
  }
}

/** The calls of one frame in a dialog, each with its *Rewind this call* button. */
export async function showFrameCalls(
  connection: LogicianConnection | null,
  frame: number,
  rewound: () => void = () => undefined
): Promise<void> {
  if (!connection || connection.state !== 'ready') {
    Notification.warning('Logician: this notebook is not connected to a Logician kernel.', { autoClose: 5000 });
    return;
  }
  let calls: ICallLine[];
  try {
    calls = (await connection.ask({ type: 'frames.calls', frame }, 'frames.calls')).calls;
  } catch (err) {
    Notification.error(`Logician: cannot list the calls: ${(err as Error).message}`, { autoClose: 8000 });
    return;
  }
  const list = document.createElement('div');
  list.className = 'lk-CallList';
  if (!calls.length) {
    list.textContent = 'This cell made no tool call.';
  }
  const dialog = new Dialog({
    title: `Tool calls of frame ${frame}`,
    body: new Widget({ node: list }),
    buttons: [Dialog.cancelButton({ label: 'Close' })],
    hasClose: true
  });
  for (const call of calls) {
    list.appendChild(
      line(call, (c, button) => {
        dialog.reject();
        void confirmAndRewindCall(connection, c).then(done => {
          if (done) {
            rewound();
            button.textContent = 'Rewound';
            button.dataset.undoable = 'false';
            button.disabled = true;
          }
        });
      })
    );
  }
  // Off while a cell runs (a call rewind then would race it), on again when it has finished.
  const unwatch = watchBusy(connection, why => {
    for (const button of list.querySelectorAll<HTMLButtonElement>('button.lk-CallLine-rewind')) {
      const call = calls.find(c => c.id === button.closest<HTMLElement>('.lk-CallLine')?.dataset.call);
      button.disabled = !!why || button.dataset.undoable !== 'true';
      button.title = why ?? (call ? callTooltip(call) : '');
    }
  });
  try {
    await dialog.launch();
  } finally {
    unwatch();
  }
}

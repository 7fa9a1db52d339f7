/**
 * One notebook's link to its kernel's `logician` comm.
 *
 * Follows the session's kernel through restarts and kernel changes. For a kernel that is not a
 * Logician kernel the state is `not-logician` and nothing is opened. On JupyterLab >= 4.4 comm
 * messages travel on a per-comm-target subshell; the comm is opened only once that subshell has
 * started, and answers are matched by `re` (never by awaiting a future's `.done`, which does not
 * settle while a cell runs on the main shell).
 */
import type { ISessionContext } from '@jupyterlab/apputils';
import type { Kernel, KernelMessage as KM } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import {
  answerTo,
  IApprovalRequest,
  INotice,
  IRestoreProgress,
  IStatus,
  KernelMessage,
  parseKernelMessage,
  ProtocolError,
  request,
  Request,
  TARGET
} from './protocol';

export type ConnectionState = 'no-kernel' | 'connecting' | 'not-logician' | 'ready' | 'error';

/** How long an answer may take before the request fails (a busy kernel answers on its subshell). */
export const REQUEST_TIMEOUT_MS = 30_000;

interface IWaiting {
  resolve: (msg: KernelMessage) => void;
  reject: (err: Error) => void;
  timer: ReturnType<typeof setTimeout>;
  /** Starts (or restarts) the timeout. */
  arm: () => void;
}

export class LogicianConnection {
  constructor(readonly sessionContext: ISessionContext) {
    sessionContext.kernelChanged.connect(this._onKernelChanged, this);
    sessionContext.statusChanged.connect(this._onKernelStatus, this);
    void this._attach(sessionContext.session?.kernel ?? null);
  }

  get state(): ConnectionState {
    return this._state;
  }

  /** Why the state is `error` or `not-logician`, in words. */
  get detail(): string {
    return this._detail;
  }

  get status(): IStatus | null {
    return this._status;
  }

  get pending(): IApprovalRequest[] {
    return [...this._pending.values()];
  }

  /** This session's notices, newest first. */
  get notices(): INotice[] {
    return this._notices;
  }

  /** Notices not read yet, as the kernel counts them (`%logician status` says the same). */
  get unreadNotices(): number {
    return this._status?.unread_notices ?? this._notices.filter(n => !n.read).length;
  }

  get noticesChanged(): ISignal<this, INotice[]> {
    return this._noticesChanged;
  }

  /** The user has seen every notice shown: tell the kernel, so its count agrees. */
  markNoticesRead(): void {
    const newest = this._notices[0];
    if (this._state !== 'ready' || newest === undefined || this.unreadNotices === 0) {
      return;
    }
    this._notices = this._notices.map(n => (n.id <= newest.id ? { ...n, read: true } : n));
    this._noticesChanged.emit(this._notices);
    this.ask({ type: 'notices.read', up_to: newest.id }, 'notices.read')
      .then(answer => this._setUnread(answer.unread))
      .catch(() => undefined);
  }

  get stateChanged(): ISignal<this, ConnectionState> {
    return this._stateChanged;
  }

  /** The rewind, undo or resume under way (its latest report), null when none is. */
  get progress(): IRestoreProgress | null {
    return this._progress;
  }

  get progressChanged(): ISignal<this, IRestoreProgress | null> {
    return this._progressChanged;
  }

  get statusChanged(): ISignal<this, IStatus | null> {
    return this._statusChanged;
  }

  get approvalsChanged(): ISignal<this, IApprovalRequest[]> {
    return this._approvalsChanged;
  }

  /** Every announcement (`frames.changed`, `frames.rewound`, ...) as it arrives. */
  get announced(): ISignal<this, KernelMessage> {
    return this._announced;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Tell the kernel the Lab saved `path` (server-relative): its frame attributes that change
   * to the user. Fire and forget: a kernel that is not ready or answers late loses nothing. */
  reportSave(path: string, time: string): void {
    if (this._state !== 'ready') {
      return;
    }
    // The notebook's path tells the kernel the offset from the server root to its directory.
    this.ask({ type: 'document.saved', path, time, notebook: this.sessionContext.path }, 'document.saved').catch(
      () => undefined
    );
  }

  /** Ask the kernel; resolves with its answer, rejects with its `error` text. */
  async ask<T extends KernelMessage['type']>(
    req: Request,
    expect: T
  ): Promise<Extract<KernelMessage, { type: T }>> {
    const comm = this._comm;
    if (this._state !== 'ready' || comm === null) {
      throw new Error(
        this._state === 'not-logician'
          ? 'not a Logician kernel'
          : this._state === 'no-kernel'
            ? 'no kernel is running'
            : `not connected (${this._state})`
      );
    }
    const id = `${this._prefix}-${++this._seq}`;
    const answer = new Promise<KernelMessage>((resolve, reject) => {
      const waiting: IWaiting = {
        resolve,
        reject,
        timer: 0 as unknown as ReturnType<typeof setTimeout>,
        arm: () => {
          clearTimeout(waiting.timer);
          waiting.timer = setTimeout(() => {
            this._waiting.delete(id);
            reject(new Error(`the kernel did not answer "${req.type}" within ${REQUEST_TIMEOUT_MS / 1000} s`));
          }, REQUEST_TIMEOUT_MS);
        }
      };
      waiting.arm();
      this._waiting.set(id, waiting);
    });
    // Not awaiting the future's `.done`: no idle status arrives for a subshell's message
    // while a cell runs, so it may never settle. The answer arrives through onMsg.
    comm.send(request(req, id) as any, undefined, undefined, true);
    const msg = await answer;
    if (msg.type === 'error') {
      throw new Error(msg.error);
    }
    if (msg.type !== expect) {
      throw new Error(`expected "${expect}" from the kernel, got "${msg.type}"`);
    }
    return msg as Extract<KernelMessage, { type: T }>;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._detach();
    Signal.clearData(this);
  }

  private _onKernelChanged(_: ISessionContext, change: { newValue: Kernel.IKernelConnection | null }): void {
    void this._attach(change.newValue);
  }

  private _onKernelStatus(_: ISessionContext, status: Kernel.Status): void {
    // A restart keeps the kernel connection but loses the comm: open a new one.
    if (status === 'restarting' || status === 'autorestarting') {
      this._detach();
      this._setState('connecting');
    } else if (status === 'dead' && this._comm !== null) {
      // Nothing will answer: what waits fails now (not after the timeout), and a new or
      // restarted kernel is attached when it comes.
      this._detach('the kernel stopped');
      this._setState('no-kernel');
    } else if (status === 'idle' && this._state === 'connecting' && this._comm === null && !this._attaching) {
      void this._attach(this.sessionContext.session?.kernel ?? null);
    }
  }

  private async _attach(kernel: Kernel.IKernelConnection | null): Promise<void> {
    this._detach();
    const generation = ++this._generation;
    if (kernel === null) {
      this._setState('no-kernel');
      return;
    }
    this._attaching = true;
    this._setState('connecting');
    try {
      const info = await kernel.info;
      if (generation !== this._generation || this._disposed) {
        return;
      }
      // The kernel reports ipykernel's implementation (a drop-in); its own version field says Logician.
      if (typeof (info as { logician_version?: unknown }).logician_version !== 'string') {
        this._detail = `${info.implementation || 'this'} kernel (${kernel.name})`;
        this._setState('not-logician');
        return;
      }
      const comm = kernel.createComm(TARGET);
      // `subshellStarted` is on the comm handler (JupyterLab >= 4.4), not on IComm.
      const started = (comm as { subshellStarted?: Promise<void> }).subshellStarted;
      if (kernel.supportsSubshells && started) {
        await started;
      }
      if (generation !== this._generation || this._disposed) {
        comm.dispose();
        return;
      }
      comm.onMsg = (msg: KM.ICommMsgMsg) => this._onMsg(msg.content.data);
      comm.onClose = () => {
        if (this._comm === comm) {
          this._comm = null;
          this._setState('connecting');
        }
      };
      this._comm = comm;
      comm.open({ v: 1 });
      // `hello` arrives through onMsg and makes the state `ready`.
    } catch (err) {
      if (generation === this._generation) {
        this._detail = String(err);
        this._setState('error');
      }
    } finally {
      if (generation === this._generation) {
        this._attaching = false;
      }
    }
  }

  private _detach(reason = 'the kernel connection changed'): void {
    for (const [, waiting] of this._waiting) {
      clearTimeout(waiting.timer);
      waiting.reject(new Error(reason));
    }
    this._waiting.clear();
    const comm = this._comm;
    this._comm = null;
    if (comm && !comm.isDisposed) {
      try {
        comm.close();
      } catch {
        comm.dispose();
      }
    }
    this._pending.clear();
    this._approvalsChanged.emit([]);
    this._notices = [];
    this._noticesChanged.emit([]);
    this._setProgress(null);
  }

  private _onMsg(data: unknown): void {
    const msg = parseKernelMessage(data);
    if (msg instanceof ProtocolError) {
      console.warn(`Logician: ${msg.message}`);
      return;
    }
    const re = answerTo(msg);
    if (re !== undefined) {
      const waiting = this._waiting.get(String(re));
      if (waiting) {
        this._waiting.delete(String(re));
        clearTimeout(waiting.timer);
        waiting.resolve(msg);
      }
      if (msg.type === 'status') {
        this._setStatus(msg);
      }
      return;
    }
    switch (msg.type) {
      case 'hello':
        this._pending = new Map(msg.pending.map(p => [p.request_id, p]));
        this._approvalsChanged.emit(this.pending);
        if (msg.status) {
          this._setStatus(msg.status);
        }
        this._notices = msg.notices ?? [];
        this._noticesChanged.emit(this._notices);
        this._setState('ready');
        break;
      case 'notice':
        this._notices = [msg.notice, ...this._notices.filter(n => n.id !== msg.notice.id)];
        this._noticesChanged.emit(this._notices);
        this._setUnread(msg.unread);
        break;
      case 'status':
        this._setStatus(msg);
        break;
      case 'progress': {
        // A long rewind is still working: its answer is not late while it reports.
        for (const waiting of this._waiting.values()) {
          waiting.arm();
        }
        const { type: _t, v: _v, ...report } = msg as any;
        this._setProgress(msg.finished ? null : (report as IRestoreProgress));
        break;
      }
      case 'approval.requested': {
        const { type: _type, v: _v, ...req } = msg as any;
        this._pending.set(msg.request_id, req as IApprovalRequest);
        this._approvalsChanged.emit(this.pending);
        break;
      }
      case 'approval.resolved':
        if (this._pending.delete(msg.request_id)) {
          this._approvalsChanged.emit(this.pending);
        }
        break;
      default:
        break;
    }
    this._announced.emit(msg);
  }

  private _setUnread(unread: number): void {
    if (this._status) {
      this._setStatus({ ...this._status, unread_notices: unread });
    }
  }

  private _setProgress(progress: IRestoreProgress | null): void {
    if (progress === null && this._progress === null) {
      return;
    }
    this._progress = progress;
    this._progressChanged.emit(progress);
  }

  private _setStatus(status: IStatus): void {
    this._status = status;
    this._statusChanged.emit(status);
  }

  private _setState(state: ConnectionState): void {
    if (state === this._state) {
      return;
    }
    if (state !== 'error' && state !== 'not-logician') {
      this._detail = '';
    }
    this._state = state;
    this._stateChanged.emit(state);
  }

  private _state: ConnectionState = 'no-kernel';
  private _detail = '';
  private _status: IStatus | null = null;
  private _progress: IRestoreProgress | null = null;
  private _pending = new Map<string, IApprovalRequest>();
  private _notices: INotice[] = [];
  private _comm: Kernel.IComm | null = null;
  private _generation = 0;
  private _attaching = false;
  private _seq = 0;
  private _prefix = Math.random().toString(36).slice(2, 8);
  private _waiting = new Map<string, IWaiting>();
  private _disposed = false;
  private _stateChanged = new Signal<this, ConnectionState>(this);
  private _statusChanged = new Signal<this, IStatus | null>(this);
  private _progressChanged = new Signal<this, IRestoreProgress | null>(this);
  private _approvalsChanged = new Signal<this, IApprovalRequest[]>(this);
  private _noticesChanged = new Signal<this, INotice[]>(this);
  private _announced = new Signal<this, KernelMessage>(this);
}

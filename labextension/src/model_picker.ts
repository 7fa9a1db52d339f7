/**
 * The model picker beside the status: the model in use, the models the server lists
 * (`/v1/models`, Ollama's `/api/tags`) and the profiles' models; picking one applies it to
 * this kernel's session (`model.use`: a session override, as `%logician config set
 * model.name`), from the next request on. *Make default* persists it (and the profile in use)
 * to the user config file (`model.default`: `config set --persist user`) and says where.
 */
import { Notification } from '@jupyterlab/apputils';

import { jpButton } from './buttons';
import type { LogicianConnection } from './connection';
import { modelOptions } from './models';

export class ModelPickerView {
  readonly node: HTMLElement;

  constructor() {
    this.node = document.createElement('div');
    this.node.className = 'lk-ModelPicker';
    const label = document.createElement('label');
    label.append(document.createTextNode('Model '));
    this._select = document.createElement('select');
    this._select.className = 'jp-mod-styled lk-ModelPicker-select';
    this._select.setAttribute('aria-label', 'The model this kernel uses');
    this._select.addEventListener('focus', () => void this.load());
    this._select.addEventListener('change', () => void this._use(this._select.value));
    label.append(this._select);
    this._default = jpButton(
      'Make default',
      'default',
      'Save this model (and the profile in use) to your user config file, for new kernels too',
      'lk-ModelPicker-default'
    );
    this._default.addEventListener('click', () => void this._makeDefault(this._select.value));
    this.node.append(label, this._default);
    this._note = document.createElement('div');
    this._note.className = 'lk-ModelPicker-note';
    this.node.append(this._note);
    this._saved = document.createElement('div');
    this._saved.className = 'lk-ModelPicker-saved';
    this.node.append(this._saved);
    this.node.hidden = true;
  }

  setConnection(connection: LogicianConnection | null): void {
    this._connection?.stateChanged.disconnect(this._onState, this);
    this._connection?.statusChanged.disconnect(this._onStatus, this);
    this._connection = connection;
    connection?.stateChanged.connect(this._onState, this);
    connection?.statusChanged.connect(this._onStatus, this);
    this._onState();
  }

  /** Ask the kernel what can be picked (on connecting and each time the list is opened). */
  async load(): Promise<void> {
    const conn = this._connection;
    if (!conn || conn.state !== 'ready') {
      return;
    }
    const seq = ++this._loads;
    try {
      const choices = await conn.ask({ type: 'models.list' }, 'models');
      if (conn !== this._connection || seq !== this._loads) {
        return; // superseded: a pick or a newer list since, which this answer predates
      }
      const current = this._select.value || choices.current;
      this._select.replaceChildren(
        ...modelOptions(choices).map(o => {
          const option = document.createElement('option');
          option.value = o.model;
          option.textContent = o.label;
          return option;
        })
      );
      this._select.value = choices.current || current;
      this._note.textContent = choices.served_error ?? '';
      this.node.hidden = false;
    } catch {
      this.node.hidden = true; // a kernel without a picker: the status still names the model
    }
  }

  private async _use(model: string): Promise<void> {
    const conn = this._connection;
    if (!conn || !model) {
      return;
    }
    this._loads++; // a list asked before the pick must not put the old model back
    this._default.disabled = true; // *Make default* saves what is in use: wait for it
    try {
      const used = await conn.ask({ type: 'model.use', model }, 'model.use');
      Notification.success(`Logician: ${used.model} for this kernel's session`, { autoClose: 4000 });
      await this.load();
    } catch (err) {
      Notification.error(`Logician: the model was not changed: ${(err as Error).message}`, { autoClose: 8000 });
      await this.load();
    } finally {
      this._default.disabled = false;
    }
  }

  private async _makeDefault(model: string): Promise<void> {
    const conn = this._connection;
    if (!conn || !model) {
      return;
    }
    this._default.disabled = true;
    try {
      const made = await conn.ask({ type: 'model.default', model }, 'model.default');
      this._saved.textContent = made.said;
      Notification.success(`Logician: ${made.model} is the default (${made.file})`, { autoClose: 5000 });
    } catch (err) {
      this._saved.textContent = '';
      Notification.error(`Logician: the default was not saved: ${(err as Error).message}`, { autoClose: 8000 });
    } finally {
      this._default.disabled = false;
      await this.load();
    }
  }

  private _onState(): void {
    if (this._connection?.state === 'ready') {
      void this.load();
    } else {
      this.node.hidden = true;
    }
  }

  private _onStatus(): void {
    const model = this._connection?.status?.model;
    if (model && document.activeElement !== this._select && this._select.value !== model) {
      void this.load(); // changed elsewhere (`%logician config set model.name`)
    }
  }

  private _select: HTMLSelectElement;
  private _loads = 0;
  private _default: HTMLButtonElement;
  private _note: HTMLElement;
  private _saved: HTMLElement;
  private _connection: LogicianConnection | null = null;
}

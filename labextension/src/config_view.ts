/**
 * *Effective configuration*, a section of the sidebar: every key with its value (secrets
 * masked by the kernel), the layer that set it (where, on hover) and the problems `%logician
 * config` shows. Editing a value runs `config set` for this session, or with *Save to my user
 * config* checked, `config set --persist user`; a refusal is shown next to the field.
 *
 * JupyterLab's Settings Editor holds only this extension's UI preferences; the kernel's
 * configuration lives here and in its files, one source of truth each.
 */
import { jpButton } from './buttons';
import type { LogicianConnection } from './connection';
import { configProblems, filterRows } from './model_settings';
import type { IConfigShown } from './protocol';

export class ConfigSectionView {
  readonly node: HTMLDetailsElement;

  constructor() {
    this.node = document.createElement('details');
    this.node.className = 'lk-Config';
    const summary = document.createElement('summary');
    summary.textContent = 'Effective configuration';
    this.node.append(summary);
    this.node.addEventListener('toggle', () => {
      if (this.node.open) {
        void this.load();
      }
    });
    const bar = document.createElement('div');
    bar.className = 'lk-Config-bar';
    this._filter = document.createElement('input');
    this._filter.type = 'search';
    this._filter.className = 'jp-mod-styled lk-Config-filter';
    this._filter.placeholder = 'Filter keys';
    this._filter.setAttribute('aria-label', 'Filter the configuration keys');
    this._filter.addEventListener('input', () => this._render());
    const persist = document.createElement('label');
    persist.className = 'lk-Config-persistLabel';
    this._persist = document.createElement('input');
    this._persist.type = 'checkbox';
    this._persist.className = 'lk-Config-persist';
    persist.append(this._persist, document.createTextNode(' Save to my user config'));
    persist.title = 'Checked: `config set --persist user` (the user config file); unchecked: this session only';
    const refresh = jpButton('Refresh', 'default', 'Read the configuration again', 'lk-Config-refresh');
    refresh.addEventListener('click', () => void this.load());
    bar.append(this._filter, persist, refresh);
    this._problems = document.createElement('ul');
    this._problems.className = 'lk-Config-problems';
    this._key = document.createElement('div');
    this._key.className = 'lk-Config-apiKey';
    this._rows = document.createElement('div');
    this._rows.className = 'lk-Config-rows';
    this._rows.setAttribute('role', 'list');
    this.node.append(bar, this._problems, this._key, this._rows);
  }

  setConnection(connection: LogicianConnection | null): void {
    this._connection?.statusChanged.disconnect(this._onStatus, this);
    this._connection = connection;
    connection?.statusChanged.connect(this._onStatus, this);
    this._model = connection?.status?.model ?? null;
    this._shown = null;
    this._render();
    if (this.node.open) {
      void this.load();
    }
  }

  async load(): Promise<void> {
    const conn = this._connection;
    if (!conn || conn.state !== 'ready') {
      return;
    }
    try {
      const shown = await conn.ask({ type: 'config.show' }, 'config');
      if (conn === this._connection) {
        this._shown = shown;
        this._render();
      }
    } catch (err) {
      this._problems.replaceChildren(this._li(`The configuration could not be read: ${(err as Error).message}`));
    }
  }

  /** The model changed (a pick, *Connect*, `%logician config set`): read the section again,
   * if open. Other status pushes (a run's tokens, several a second) change nothing here. */
  private _onStatus(): void {
    const model = this._connection?.status?.model ?? null;
    if (model !== this._model) {
      this._model = model;
      if (this.node.open) {
        void this.load();
      }
    }
  }

  private async _set(key: string, value: string, error: HTMLElement, input: HTMLInputElement): Promise<void> {
    const conn = this._connection;
    if (!conn) {
      return;
    }
    error.textContent = '';
    input.removeAttribute('aria-invalid');
    const persist = this._persist.checked ? 'user' : 'session';
    try {
      const done = await conn.ask({ type: 'config.set', key, value, persist }, 'config.set');
      if (!done.ok) {
        error.textContent = done.error ?? 'refused';
        input.setAttribute('aria-invalid', 'true');
        return;
      }
      this._said = done.said ?? '';
      await this.load();
    } catch (err) {
      error.textContent = (err as Error).message;
      input.setAttribute('aria-invalid', 'true');
    }
  }

  private _render(): void {
    const shown = this._shown;
    if (!shown) {
      this._problems.replaceChildren();
      this._key.textContent = '';
      this._rows.replaceChildren();
      return;
    }
    this._problems.replaceChildren(...configProblems(shown).map(p => this._li(p)));
    this._key.textContent = [shown.api_key ?? '', this._said].filter(Boolean).join(' · ');
    this._rows.replaceChildren(
      ...filterRows(shown.rows, this._filter.value).map(row => {
        const line = document.createElement('div');
        line.className = 'lk-Config-row';
        line.dataset.key = row.key;
        line.setAttribute('role', 'listitem');
        const key = document.createElement('span');
        key.className = 'lk-Config-key';
        key.textContent = row.key;
        const input = document.createElement('input');
        input.className = 'jp-mod-styled lk-Config-value';
        input.value = row.text;
        input.spellcheck = false;
        input.setAttribute('aria-label', row.key);
        const layer = document.createElement('span');
        layer.className = 'lk-Config-layer';
        layer.dataset.layer = row.layer;
        layer.textContent = row.layer;
        layer.title = row.where + (row.restart_required ? ' (takes effect after a restart)' : '');
        const error = document.createElement('div');
        error.className = 'lk-Config-error';
        error.setAttribute('role', 'alert');
        input.addEventListener('change', () => {
          if (input.value !== row.text) {
            void this._set(row.key, input.value, error, input);
          }
        });
        line.append(key, input, layer, error);
        return line;
      })
    );
  }

  private _li(text: string): HTMLLIElement {
    const li = document.createElement('li');
    li.textContent = text;
    return li;
  }

  private _connection: LogicianConnection | null = null;
  private _shown: IConfigShown | null = null;
  private _model: string | null = null;
  private _said = '';
  private _filter: HTMLInputElement;
  private _persist: HTMLInputElement;
  private _problems: HTMLUListElement;
  private _key: HTMLElement;
  private _rows: HTMLElement;
}

/**
 * *Connect a model*, a form in the sidebar: provider, base URL, key, model and a name. The
 * kernel checks the server with one request and the key, stores the key in the user's
 * credentials file (0600, outside the workspace) and writes a profile that names it; this
 * kernel's session then uses it. A refusal is shown next to the field it names.
 *
 * The key lives only in the password field until it is sent: it is cleared on success, never
 * kept in Lab settings or local storage (nor offered to the browser's password manager: no
 * form is submitted), and shown afterwards only masked, as the kernel returns it.
 */
import { Notification } from '@jupyterlab/apputils';

import { jpButton } from './buttons';
import type { LogicianConnection } from './connection';
import { CONNECT_FIELDS, connectedLine, connectRequest, errorField } from './model_settings';

type Field = (typeof CONNECT_FIELDS)[number];

const PLACEHOLDERS: Record<Exclude<Field, 'provider'>, string> = {
  base_url: 'Base URL, e.g. http://localhost:11434/v1 (empty: the provider’s API)',
  api_key: 'API key (empty: a server that needs none)',
  model: 'Model (empty: the server’s first)',
  name: 'Profile name (empty: from the host)'
};

export class ConnectModelView {
  readonly node: HTMLDetailsElement;

  constructor(onConnected: () => void) {
    this._onConnected = onConnected;
    this.node = document.createElement('details');
    this.node.className = 'lk-Connect';
    const summary = document.createElement('summary');
    summary.textContent = 'Connect a model';
    this.node.append(summary);
    // Not a <form>: a browser's password manager offers to save what a submitted form's
    // password field held, and the key must stay out of every store but the kernel's.
    const form = document.createElement('div');
    form.className = 'lk-Connect-form';
    form.setAttribute('role', 'form');
    form.addEventListener('keydown', event => {
      if (event.key === 'Enter' && (event.target as HTMLElement).tagName === 'INPUT') {
        event.preventDefault();
        void this.connect();
      }
    });
    const provider = document.createElement('select');
    provider.className = 'jp-mod-styled lk-Connect-provider';
    provider.setAttribute('aria-label', 'Provider');
    for (const [value, label, title] of [
      ['openai', 'OpenAI-compatible', 'OpenAI, Ollama, llama.cpp, vLLM, LM Studio, OpenRouter'],
      ['anthropic', 'Anthropic', 'Anthropic’s Messages API']
    ]) {
      const option = document.createElement('option');
      option.value = value;
      option.textContent = label;
      option.title = title;
      provider.append(option);
    }
    this._inputs.provider = provider;
    for (const field of CONNECT_FIELDS) {
      let input: HTMLInputElement | HTMLSelectElement;
      if (field === 'provider') {
        input = provider;
      } else {
        const text = document.createElement('input');
        text.type = field === 'api_key' ? 'password' : 'text';
        text.className = `jp-mod-styled lk-Connect-input lk-Connect-${field}`;
        text.name = `logician-${field}`;
        text.placeholder = PLACEHOLDERS[field];
        text.setAttribute('aria-label', PLACEHOLDERS[field]);
        text.autocomplete = 'off';
        text.spellcheck = false;
        input = text;
        this._inputs[field] = text;
      }
      form.append(input, this._errorNode(field));
    }
    const submit = jpButton('Connect', 'accept', 'Check the server with this key, then store the key outside the workspace');
    submit.classList.add('lk-Connect-submit');
    submit.addEventListener('click', () => void this.connect());
    this._submit = submit;
    form.append(submit, this._errorNode('form'));
    this._result = document.createElement('div');
    this._result.className = 'lk-Connect-result';
    form.append(this._result);
    this.node.append(form);
  }

  setConnection(connection: LogicianConnection | null): void {
    this._connection = connection;
  }

  async connect(): Promise<void> {
    const conn = this._connection;
    if (!conn) {
      return;
    }
    this._clearErrors();
    this._result.textContent = 'Checking the server…';
    this._submit.disabled = true;
    const req = connectRequest({
      provider: this._inputs.provider?.value ?? 'openai',
      base_url: this._inputs.base_url?.value ?? '',
      api_key: this._inputs.api_key?.value ?? '',
      model: this._inputs.model?.value ?? '',
      name: this._inputs.name?.value ?? ''
    });
    try {
      const done = await conn.ask(req, 'model.connect');
      if (!done.ok) {
        this._result.textContent = '';
        this._showError(errorField(done), done.error ?? 'not connected');
        return;
      }
      const key = this._inputs.api_key as HTMLInputElement;
      key.value = ''; // the key leaves the page: only its masked form stays
      key.placeholder = done.key ? `Stored: ${done.key}` : PLACEHOLDERS.api_key;
      this._result.textContent = connectedLine(done);
      Notification.success(`Logician: connected; this session uses ${done.model}`, { autoClose: 5000 });
      this._onConnected();
    } catch (err) {
      this._result.textContent = '';
      this._showError('form', (err as Error).message);
    } finally {
      this._submit.disabled = false;
    }
  }

  private _errorNode(field: string): HTMLElement {
    const node = document.createElement('div');
    node.className = 'lk-Connect-error';
    node.dataset.field = field;
    node.setAttribute('role', 'alert');
    this._errors.set(field, node);
    return node;
  }

  private _showError(field: string, text: string): void {
    const node = this._errors.get(field) ?? this._errors.get('form');
    if (node) {
      node.textContent = text;
    }
    this._inputs[field as Field]?.setAttribute('aria-invalid', 'true');
  }

  private _clearErrors(): void {
    for (const node of this._errors.values()) {
      node.textContent = '';
    }
    for (const input of Object.values(this._inputs)) {
      input?.removeAttribute('aria-invalid');
    }
  }

  private _connection: LogicianConnection | null = null;
  private _onConnected: () => void;
  private _inputs: Partial<Record<Field, HTMLInputElement | HTMLSelectElement>> = {};
  private _errors = new Map<string, HTMLElement>();
  private _submit: HTMLButtonElement;
  private _result: HTMLElement;
}

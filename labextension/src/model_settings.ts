/**
 * Pure helpers of *Connect a model* and the *Effective configuration* section: the request a
 * filled-in form sends (empty fields left out, the key only when typed), the line a connection
 * is shown by (the key masked, as the kernel sent it), and the configuration's rows and
 * problems as the section lists them.
 */
import type { IConfigRow, IConfigShown, IModelConnected, Request } from './protocol';

export interface IConnectForm {
  provider: string;
  base_url: string;
  api_key: string;
  model: string;
  name: string;
}

/** The fields of the form, in the order they are shown (errors are placed next to them). */
export const CONNECT_FIELDS = ['provider', 'base_url', 'api_key', 'model', 'name'] as const;

/** The `model.connect` request of a form: trimmed, empty fields left out. */
export function connectRequest(form: IConnectForm): Extract<Request, { type: 'model.connect' }> {
  const provider = form.provider === 'anthropic' ? 'anthropic' : 'openai';
  const out: Extract<Request, { type: 'model.connect' }> = { type: 'model.connect', provider };
  const base = form.base_url.trim();
  const key = form.api_key.trim();
  const model = form.model.trim();
  const name = form.name.trim();
  if (base) {
    out.base_url = base;
  }
  if (key) {
    out.api_key = key;
  }
  if (model) {
    out.model = model;
  }
  if (name) {
    out.name = name;
  }
  return out;
}

/** What the form says after a connection: never the key, only its masked form. */
export function connectedLine(done: IModelConnected): string {
  const key = done.key ? `key ${done.key} stored in ${done.key_file}` : 'no key';
  const models = done.models?.length ?? 0;
  return (
    `Connected: profile ${done.profile} (${done.model ?? 'no model'}, ${models} model(s) served), ` +
    `${key}; profile saved in ${done.config_file}.`
  );
}

/** Where a refusal is shown: the field it names, or the form as a whole. */
export function errorField(done: IModelConnected): string {
  const field = done.field ?? '';
  return (CONNECT_FIELDS as readonly string[]).includes(field) ? field : 'form';
}

/** The rows whose key, value or layer contains `filter` (case-insensitive); all without one. */
export function filterRows(rows: IConfigRow[], filter: string): IConfigRow[] {
  const wanted = filter.trim().toLowerCase();
  if (!wanted) {
    return rows;
  }
  return rows.filter(r => `${r.key} ${r.text} ${r.layer}`.toLowerCase().includes(wanted));
}

/** The problems `%logician config` shows, one line each, most serious first. */
export function configProblems(shown: IConfigShown): string[] {
  const out: string[] = [];
  if (shown.model_refusal) {
    out.push(`Model calls refused: ${shown.model_refusal}`);
  }
  for (const layer of shown.layers) {
    if (/LEFT OUT|NOT APPLIED|dropped/.test(layer.status)) {
      out.push(`${layer.name} layer: ${layer.status} (${layer.source})`);
    }
  }
  out.push(...shown.dropped.map(d => `dropped: ${d}`));
  if (shown.held_back.length) {
    out.push(`project fields held back: ${shown.held_back.join(', ')}`);
  }
  out.push(...shown.notices);
  return [...new Set(out)];
}

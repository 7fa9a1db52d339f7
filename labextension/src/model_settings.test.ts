import { describe, expect, it } from 'vitest';

import { configProblems, connectedLine, connectRequest, errorField, filterRows } from './model_settings';
import type { IConfigRow, IConfigShown } from './protocol';

describe('connectRequest', () => {
  it('sends what was typed, trimmed, and leaves out what was not (a key only when given)', () => {
    expect(
      connectRequest({ provider: 'openai', base_url: ' http://127.0.0.1:8080/v1 ', api_key: '', model: '', name: '' })
    ).toEqual({ type: 'model.connect', provider: 'openai', base_url: 'http://127.0.0.1:8080/v1' });
    expect(
      connectRequest({ provider: 'anthropic', base_url: '', api_key: ' sk-ant-1 ', model: 'claude', name: 'work' })
    ).toEqual({ type: 'model.connect', provider: 'anthropic', api_key: 'sk-ant-1', model: 'claude', name: 'work' });
  });
});

describe('connectedLine and errorField', () => {
  it('shows the masked key and where things were written, never more', () => {
    const line = connectedLine({
      ok: true,
      profile: 'local',
      model: 'm1',
      models: ['m1', 'm2'],
      key: 'sk-…abcd',
      key_file: '/u/credentials.json',
      config_file: '/u/config.toml'
    });
    expect(line).toBe(
      'Connected: profile local (m1, 2 model(s) served), key sk-…abcd stored in /u/credentials.json; ' +
        'profile saved in /u/config.toml.'
    );
  });

  it('puts a refusal next to the field it names, else on the form', () => {
    expect(errorField({ ok: false, field: 'api_key', error: 'x' })).toBe('api_key');
    expect(errorField({ ok: false, field: null, error: 'x' })).toBe('form');
    expect(errorField({ ok: false, field: 'nonsense', error: 'x' })).toBe('form');
  });
});

const row = (key: string, text: string, layer: string): IConfigRow => ({
  key,
  value: text,
  text,
  layer,
  where: layer,
  restart_required: false
});

describe('filterRows and configProblems', () => {
  it('filters by key, value or layer', () => {
    const rows = [row('model.name', '"m1"', 'profile'), row('budget.max_turns', '7', 'session')];
    expect(filterRows(rows, '').length).toBe(2);
    expect(filterRows(rows, 'SESSION').map(r => r.key)).toEqual(['budget.max_turns']);
    expect(filterRows(rows, 'm1').map(r => r.key)).toEqual(['model.name']);
  });

  it('lists what %logician config lists as problems, the refusal first', () => {
    const shown: IConfigShown = {
      workspace: '/w',
      trusted: false,
      layers: [
        { name: 'user', source: '/u/config.toml', status: 'LEFT OUT (see notices)' },
        { name: 'env', source: '0 LOGICIAN_* variable(s)', status: 'applied' }
      ],
      notices: ['/u/config.toml: line 3: not TOML'],
      dropped: [],
      held_back: ['model.base_url'],
      model_refusal: 'model calls are refused until ...',
      api_key: null,
      rows: []
    };
    expect(configProblems(shown)).toEqual([
      'Model calls refused: model calls are refused until ...',
      'user layer: LEFT OUT (see notices) (/u/config.toml)',
      'project fields held back: model.base_url',
      '/u/config.toml: line 3: not TOML'
    ]);
  });
});

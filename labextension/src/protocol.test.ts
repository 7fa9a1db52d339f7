import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import {
  answerTo,
  CHOICES,
  KERNEL_MESSAGE_TYPES,
  KernelMessage,
  parseKernelMessage,
  ProtocolError,
  request,
  REWIND_MODES,
  SCHEMA_VERSION,
  TARGET
} from './protocol';

type Json = Record<string, any>;

const schema: Json = JSON.parse(
  readFileSync(new URL('../../logician_kernel/jupyter/comm_schema.json', import.meta.url), 'utf8')
);

/** The oneOf branch of `side` ('kernel' | 'frontend') whose `type` is `const: type`. */
function branch(side: 'kernel' | 'frontend', type: string): Json {
  const found = (schema[side].oneOf as Json[]).find(b => b.properties?.type?.const === type);
  if (!found) {
    throw new Error(`no ${side} branch for ${type} in comm_schema.json`);
  }
  return found;
}

/** A branch's required fields, following `allOf: [{$ref}]` into `$defs`. */
function schemaRequired(b: Json): Set<string> {
  const req = new Set<string>(b.required ?? []);
  for (const part of b.allOf ?? []) {
    const ref: string | undefined = part.$ref;
    const def = ref ? schema.$defs[ref.replace('#/$defs/', '')] : part;
    for (const name of def.required ?? []) {
      req.add(name);
    }
  }
  return req;
}

const row = (over: Json = {}): Json => ({
  frame: 3,
  execution_count: 7,
  cell_id: 'cell-a',
  code: 'x = 1',
  time: '2024-11-29T14:03:09+00:00',
  outcome: 'ok',
  status: 'active',
  rewound_at: null,
  rewound_by: null,
  files: 1,
  skipped: 0,
  input_tokens: 120,
  output_tokens: 40,
  ...over
});

const approval = { request_id: 'r1', tool: 'bash', description: 'rm -rf build', reason: 'writes files' };

const statusBody = {
  thread: 't1',
  phase: 'turn',
  model: 'claude',
  frames: 4,
  running_cell: true,
  turn: 2,
  tool_calls: 3,
  input_tokens: 1234,
  output_tokens: 340,
  cost_usd: 0.01,
  budget: { max_turns: 8 },
  pending_approvals: 1,
  last_outcome: null
};

const notice = {
  id: 2,
  text: 'Logician: frame 3: 1 variable(s) not captured',
  time: '2024-11-29T14:03:09+00:00',
  frame: 3,
  execution_count: 7,
  cell_id: 'cell-a',
  critical: false,
  read: false
};

/** One well-formed example of every kernel message type. */
const EXAMPLES: Record<KernelMessage['type'], Json> = {
  hello: { v: 1, type: 'hello', pending: [approval], status: statusBody },
  error: { v: 1, type: 'error', error: 'unknown request type "x"', re: 4 },
  approvals: { v: 1, type: 'approvals', pending: [approval], re: 'a1' },
  'approval.decided': { v: 1, type: 'approval.decided', ok: true, request_id: 'r1', re: 2 },
  status: { v: 1, type: 'status', re: 3, ...statusBody },
  frames: { v: 1, type: 'frames', rows: [row(), row({ frame: 2, status: 'rewound', rewound_by: 1 })], total: 3, offset: 0, re: 5 },
  'frames.preview': {
    v: 1,
    type: 'frames.preview',
    frame: 2,
    frames: [2, 3],
    files: [{ path: 'a.txt', action: 'restore' }],
    skipped: [],
    conflicts: [{ path: 'b.txt', detail: 'changed since' }],
    external: [{ path: 'mine.txt', detail: 'changed outside this kernel during frame 2' }],
    messages_dropped: 4,
    re: 6
  },
  'frames.rewind': {
    v: 1,
    type: 'frames.rewind',
    ok: true,
    frame: 2,
    frames: [2, 3],
    conflicts: [],
    external: ['mine.txt'],
    summary: 'Rewound 2 frames',
    re: 7
  },
  'document.saved': { v: 1, type: 'document.saved', path: 'notes/mine.txt', recorded: true, re: 8 },
  'frames.undo': { v: 1, type: 'frames.undo', ok: true, frames: [2, 3], undoes: 14, conflicts: [], summary: 'Undid the rewind', re: 8 },
  'frames.resume': { v: 1, type: 'frames.resume', ok: true, frames: [2, 3], conflicts: [], summary: 'Resumed', re: 9 },
  'frames.undone': { v: 1, type: 'frames.undone', frames: [2, 3], cell_ids: ['cell-a'], at: '2024-11-29T14:05:00+00:00', by: 15, undoes: 14 },
  'frames.changed': { v: 1, type: 'frames.changed', total: 9 },
  'frames.calls': {
    v: 1,
    type: 'frames.calls',
    frame: 2,
    calls: [{ id: 'b1', tool: 'bash', words: 'make', files: ['out.txt'], undoable: true, why_not: '', rewound: false }],
    re: 10
  },
  'frames.rewind_call': {
    v: 1,
    type: 'frames.rewind_call',
    ok: true,
    call_id: 'b1',
    frame: 2,
    restored: ['out.txt'],
    left: [],
    summary: 'Rewound call b1',
    headline: 'Rewound call b1: 1 file(s) put back',
    re: 11
  },
  'frames.files': {
    v: 1,
    type: 'frames.files',
    frame: 2,
    rows: [{ path: 'data.csv', action: 'modify', kind: 'csv', before_size: 8, after_size: 13 }],
    total: 1,
    offset: 0,
    re: 12
  },
  'frames.diff': {
    v: 1,
    type: 'frames.diff',
    frame: 2,
    path: 'data.csv',
    kind: 'csv',
    preview: false,
    page: 1,
    pages: 1,
    before: { state: 'file', size: 8, sha256: 'ab'.repeat(32), pages: 1, page: 1, first_line: 1, text: 'a,b\n1,2\n' },
    after: { state: 'absent', size: null, sha256: null, pages: 0 },
    re: 13
  },
  'frames.preview.page': {
    v: 1,
    type: 'frames.preview.page',
    frame: 2,
    group: 'data/parts/',
    rows: [{ path: 'data/parts/p1.csv', action: 'delete' }],
    total: 20000,
    offset: 200,
    re: 7
  },
  models: {
    v: 1,
    type: 'models',
    current: 'gpt-4.1',
    provider: 'openai',
    profiles: [{ name: 'cheap', model: 'gpt-4.1-mini' }],
    served: ['qwen3-coder'],
    served_error: null,
    re: 3
  },
  'model.use': { v: 1, type: 'model.use', model: 'qwen3-coder', said: 'model.name = "qwen3-coder"', re: 4 },
  'model.default': {
    v: 1,
    type: 'model.default',
    model: 'qwen3-coder',
    said: 'Saved model.name = "qwen3-coder" in /u/config.toml (user config).',
    file: '/u/config.toml',
    re: 5
  },
  'model.connect': { v: 1, type: 'model.connect', ok: false, field: 'api_key', error: 'api_key: refused', re: 6 },
  config: {
    v: 1,
    type: 'config',
    workspace: '/w',
    trusted: true,
    layers: [{ name: 'user', source: '/u/config.toml', status: 'applied' }],
    notices: [],
    dropped: [],
    held_back: [],
    model_refusal: null,
    api_key: null,
    rows: [{ key: 'budget.max_turns', value: 7, text: '7', layer: 'session', where: 'session override', restart_required: false }],
    re: 7
  },
  'config.set': { v: 1, type: 'config.set', ok: true, key: 'budget.max_turns', said: 'budget.max_turns = 7', re: 8 },
  progress: { v: 1, type: 'progress', operation: 'rewind', done: 12400, total: 20000, finished: false },
  'frames.rewound': { v: 1, type: 'frames.rewound', frames: [2, 3], cell_ids: ['cell-a'], at: '2024-11-29T14:03:09+00:00', by: 12 },
  'approval.requested': { v: 1, type: 'approval.requested', ...approval },
  'approval.resolved': { v: 1, type: 'approval.resolved', request_id: 'r1', choice: 'deny', via: 'input' },
  notices: { v: 1, type: 'notices', rows: [notice], unread: 1, re: 10 },
  'notices.read': { v: 1, type: 'notices.read', unread: 0, re: 11 },
  notice: { v: 1, type: 'notice', notice, unread: 1 },
  'notebook.attached': { v: 1, type: 'notebook.attached', pending: 1, re: 12 },
  'notebook.received': { v: 1, type: 'notebook.received', known: true, re: 13 },
  'notebook.request': { v: 1, type: 'notebook.request', request: 'q1', op: 'cell', args: { cell_id: 'c' } }
};

const clone = (x: Json): Json => JSON.parse(JSON.stringify(x));

function errorOf(data: unknown): string {
  const out = parseKernelMessage(data);
  expect(out).toBeInstanceOf(ProtocolError);
  return (out as ProtocolError).message;
}

describe('comm_schema.json agrees with protocol.ts', () => {
  it('has the same schema version and comm target', () => {
    expect(schema.version).toBe(SCHEMA_VERSION);
    expect(schema.$defs.v.const).toBe(SCHEMA_VERSION);
    expect(schema.target).toBe(TARGET);
  });

  it('lists exactly the kernel message types the extension parses', () => {
    const types = (schema.kernel.oneOf as Json[]).map(b => b.properties.type.const);
    expect(new Set(types)).toEqual(new Set(KERNEL_MESSAGE_TYPES));
    expect(types).toHaveLength(KERNEL_MESSAGE_TYPES.length);
  });

  it('offers the same approval choices', () => {
    expect(new Set(branch('frontend', 'approval.decide').properties.choice.enum)).toEqual(new Set(CHOICES));
  });

  it('offers the same rewind modes', () => {
    expect(new Set(branch('frontend', 'frames.rewind').properties.mode.enum)).toEqual(new Set(REWIND_MODES));
  });

  it('requires every field the parser insists on (the parser rejects nothing the schema allows)', () => {
    for (const type of KERNEL_MESSAGE_TYPES) {
      const required = schemaRequired(branch('kernel', type));
      const example = EXAMPLES[type];
      // every field of our example that the parser needs must be schema-required: drop all
      // optional ones and the example must still parse
      const minimal: Json = {};
      for (const [k, v] of Object.entries(example)) {
        if (required.has(k)) {
          minimal[k] = v;
        }
      }
      if (type === 'frames') {
        const rowRequired = new Set<string>(schema.$defs.frameRow.required);
        minimal.rows = (minimal.rows as Json[]).map(r =>
          Object.fromEntries(Object.entries(r).filter(([k]) => rowRequired.has(k)))
        );
      }
      expect(parseKernelMessage(minimal), type).not.toBeInstanceOf(ProtocolError);
    }
  });
});

describe('parseKernelMessage', () => {
  it('has an example for every kernel message type', () => {
    expect(new Set(Object.keys(EXAMPLES))).toEqual(new Set(KERNEL_MESSAGE_TYPES));
  });

  it.each(Object.keys(EXAMPLES))('accepts a well-formed %s message', type => {
    const data = EXAMPLES[type as KernelMessage['type']];
    const out = parseKernelMessage(clone(data));
    expect(out).not.toBeInstanceOf(ProtocolError);
    expect(out).toEqual(data);
    expect((out as KernelMessage).type).toBe(type);
  });

  it('accepts a frames page with no rows (an empty thread)', () => {
    expect(parseKernelMessage({ v: 1, type: 'frames', rows: [], total: 0, offset: 0 })).not.toBeInstanceOf(ProtocolError);
  });

  it.each([null, undefined, 1, 'hello', true, [], [{ v: 1, type: 'hello', pending: [] }]])(
    'rejects a non-object (%j)',
    data => {
      expect(errorOf(data)).toMatch(/JSON object/);
    }
  );

  it('rejects another schema version, naming both versions', () => {
    const msg = errorOf({ ...EXAMPLES.hello, v: 2 });
    expect(msg).toContain('v2');
    expect(msg).toContain(`v${SCHEMA_VERSION}`);
  });

  it('rejects a message without a version', () => {
    const { v: _v, ...noVersion } = EXAMPLES['frames.changed'];
    expect(errorOf(noVersion)).toContain(`v${SCHEMA_VERSION}`);
  });

  it.each(['frames.list', 'approval.decide', 'Hello', '', 'frames.'])('rejects the unknown type %j', type => {
    expect(errorOf({ v: 1, type, total: 1 })).toContain(`unknown logician message type ${JSON.stringify(type)}`);
  });

  it('rejects a message without a type', () => {
    expect(errorOf({ v: 1, pending: [] })).toMatch(/unknown logician message type/);
    expect(errorOf({ v: 1, type: 3, pending: [] })).toMatch(/unknown logician message type 3/);
  });

  /** Per type, fields a view relies on, and malformed values for them. */
  const BAD_FIELDS: [KernelMessage['type'], string, unknown][] = [
    ['hello', 'pending', undefined],
    ['hello', 'pending', { r1: approval }],
    ['error', 'error', undefined],
    ['error', 'error', 42],
    ['approvals', 'pending', 'r1'],
    ['approval.decided', 'ok', 'yes'],
    ['approval.decided', 'request_id', undefined],
    ['status', 'phase', undefined],
    ['status', 'frames', 1.5],
    ['status', 'input_tokens', '12'],
    ['status', 'output_tokens', null],
    ['frames', 'rows', undefined],
    ['frames', 'rows', { 0: {} }],
    ['frames', 'total', '3'],
    ['frames', 'offset', undefined],
    ['frames.preview', 'frame', undefined],
    ['frames.preview', 'files', null],
    ['frames.preview', 'skipped', undefined],
    ['frames.preview', 'conflicts', 'b.txt'],
    ['frames.preview', 'messages_dropped', -0.5],
    ['frames.rewind', 'ok', undefined],
    ['frames.rewind', 'frame', '2'],
    ['frames.rewind', 'frames', 2],
    ['frames.rewind', 'summary', undefined],
    ['frames.undo', 'undoes', '14'],
    ['frames.undo', 'summary', undefined],
    ['frames.resume', 'frames', undefined],
    ['frames.calls', 'calls', undefined],
    ['frames.rewind_call', 'restored', 'b.txt'],
    ['frames.undone', 'undoes', undefined],
    ['frames.undone', 'cell_ids', 'cell-a'],
    ['frames.changed', 'total', undefined],
    ['notices', 'rows', undefined],
    ['notices', 'unread', '1'],
    ['notices.read', 'unread', undefined],
    ['notice', 'notice', 'frames are off'],
    ['notice', 'unread', undefined],
    ['frames.changed', 'total', Number.NaN],
    ['frames.rewound', 'frames', undefined],
    ['frames.rewound', 'cell_ids', 'cell-a'],
    ['frames.rewound', 'at', 0],
    ['frames.rewound', 'by', '12'],
    ['approval.requested', 'request_id', undefined],
    ['approval.requested', 'tool', 7],
    ['approval.resolved', 'request_id', 1],
    ['approval.resolved', 'choice', undefined],
    ['document.saved', 'recorded', undefined],
    ['document.saved', 'recorded', 'yes'],
    ['notebook.attached', 'pending', undefined],
    ['notebook.received', 'known', 'yes'],
    ['notebook.request', 'args', 'cell_id=c'],
    ['notebook.request', 'request', undefined],
    ['progress', 'done', '12400'],
    ['models', 'served', 'qwen3-coder'],
    ['models', 'current', undefined],
    ['model.use', 'model', 7],
    ['model.default', 'file', undefined],
    ['model.connect', 'ok', 'yes'],
    ['config', 'rows', undefined],
    ['config.set', 'key', 3],
    ['frames.files', 'rows', 'data.csv'],
    ['frames.diff', 'before', 'text'],
    ['frames.preview.page', 'group', undefined],
    ['frames.preview.page', 'rows', 'a.csv'],
    ['frames.preview.page', 'total', '3'],
    ['progress', 'total', undefined],
    ['progress', 'finished', 'no']
  ];

  it('covers every message type with a malformed-field case', () => {
    expect(new Set(BAD_FIELDS.map(([t]) => t))).toEqual(new Set(KERNEL_MESSAGE_TYPES));
  });

  it.each(BAD_FIELDS)('rejects %s with field %s = %j, naming the field', (type, field, value) => {
    const data = clone(EXAMPLES[type]);
    if (value === undefined) {
      delete data[field];
    } else {
      data[field] = value;
    }
    const msg = errorOf(data);
    expect(msg).toContain(`"${type}"`);
    expect(msg).toContain(`"${field}"`);
  });

  it.each([
    ['frame', undefined],
    ['frame', '3'],
    ['code', null],
    ['time', 1700000000],
    ['status', undefined],
    ['files', 1.5]
  ])('rejects a frames row with %s = %j, naming rows[i].field', (field, value) => {
    const data = clone(EXAMPLES.frames);
    const bad = data.rows[1];
    if (value === undefined) {
      delete bad[field];
    } else {
      bad[field] = value;
    }
    expect(errorOf(data)).toContain(`rows[1].${field}`);
  });

  it('rejects a frames row that is not an object, naming its index', () => {
    const data = clone(EXAMPLES.frames);
    data.rows.push('frame 1');
    expect(errorOf(data)).toContain('rows[2]');
    data.rows[2] = null;
    expect(errorOf(data)).toContain('rows[2]');
  });

  it('never throws on garbage, and rejects it', () => {
    const circular: Json = { v: 1, type: 'frames', total: 1, offset: 0 };
    circular.rows = [circular];
    const garbage: unknown[] = [
      null,
      undefined,
      0,
      -1,
      Number.NaN,
      Infinity,
      '',
      '{"v":1,"type":"hello","pending":[]}',
      true,
      Symbol('x'),
      () => 1,
      [],
      [1, 2, 3],
      [null],
      {},
      Object.create(null),
      { v: null },
      { v: '1', type: 'hello', pending: [] },
      { v: 1.0000001, type: 'hello', pending: [] },
      { v: [1], type: 'hello', pending: [] },
      { v: {}, type: 'hello', pending: [] },
      { v: 1, type: null },
      { v: 1, type: {} },
      { v: 1, type: ['hello'] },
      { v: 1, type: 'hello', pending: null },
      { v: 1, type: 'hello', pending: '[]' },
      { v: 1, type: 'frames', rows: null, total: 0, offset: 0 },
      { v: 1, type: 'frames', rows: [null, undefined, 1, 'x', []], total: 1, offset: 0 },
      { v: 1, type: 'frames', rows: [{ frame: {} }], total: 1, offset: 0 },
      { v: 1, type: 'frames', rows: new Array(3), total: 1, offset: 0 },
      circular,
      { v: 1, type: 'status', phase: Symbol('p'), frames: 1n, input_tokens: 0, output_tokens: 0 },
      { v: 1, type: 'frames.changed', total: Infinity },
      { v: 1, type: 'frames.rewound', frames: [], cell_ids: [], at: null, by: 1 },
      new Date(),
      new Map([['v', 1]])
    ];
    garbage.forEach((data, i) => {
      let out: unknown;
      expect(() => (out = parseKernelMessage(data)), `garbage[${i}]`).not.toThrow();
      expect(out, `garbage[${i}]`).toBeInstanceOf(ProtocolError);
    });
  });
});

describe('request', () => {
  it('adds the schema version and the id to a request', () => {
    expect(request({ type: 'frames.list', offset: 100, limit: 50 }, 7)).toEqual({
      v: SCHEMA_VERSION,
      id: 7,
      type: 'frames.list',
      offset: 100,
      limit: 50
    });
    expect(request({ type: 'approval.decide', request_id: 'r1', choice: 'deny', note: 'no' }, 'q-1')).toEqual({
      v: SCHEMA_VERSION,
      id: 'q-1',
      type: 'approval.decide',
      request_id: 'r1',
      choice: 'deny',
      note: 'no'
    });
  });

  it('sends rewind targets as given', () => {
    expect(request({ type: 'frames.rewind', cell_id: 'cell-a', mode: 'files', force: true }, 1)).toEqual({
      v: SCHEMA_VERSION,
      id: 1,
      type: 'frames.rewind',
      cell_id: 'cell-a',
      mode: 'files',
      force: true
    });
  });

  it('sends a document save with the notebook it is reported to, as the schema names it', () => {
    const wire = request({ type: 'document.saved', path: 'notes/a.txt', time: '2026-12-01T20:00:00Z', notebook: 'nb.ipynb' }, 9);
    expect(wire).toEqual({ v: 1, id: 9, type: 'document.saved', path: 'notes/a.txt', time: '2026-12-01T20:00:00Z', notebook: 'nb.ipynb' });
    expect(Object.keys(branch('frontend', 'document.saved').properties)).toEqual(
      expect.arrayContaining(['path', 'time', 'notebook'])
    );
  });

  it('produces requests the schema names', () => {
    const wire = request({ type: 'status' }, 3);
    expect(() => branch('frontend', wire.type as string)).not.toThrow();
    expect(wire.v).toBe(schema.$defs.v.const);
  });
});

describe('answerTo', () => {
  it('returns the request id an answer echoes', () => {
    expect(answerTo(parseKernelMessage(clone(EXAMPLES.error)) as KernelMessage)).toBe(4);
    expect(answerTo(parseKernelMessage(clone(EXAMPLES.approvals)) as KernelMessage)).toBe('a1');
    expect(answerTo({ type: 'frames', rows: [], total: 0, offset: 0, re: 0 })).toBe(0);
  });

  it('is undefined for an announcement', () => {
    expect(answerTo(parseKernelMessage(clone(EXAMPLES['frames.changed'])) as KernelMessage)).toBeUndefined();
    expect(answerTo(parseKernelMessage(clone(EXAMPLES['approval.requested'])) as KernelMessage)).toBeUndefined();
  });
});

describe('parseKernelMessage: hostile input from the wire', () => {
  it('does not take inherited property names for message types', () => {
    for (const type of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
      const result = parseKernelMessage({ v: 1, type });
      expect(result).toBeInstanceOf(ProtocolError);
      expect((result as ProtocolError).message).toContain('unknown logician message type');
    }
  });

  it('never throws on a version that cannot be turned into a string', () => {
    const result = parseKernelMessage(JSON.parse('{"v":{"toString":1}}'));
    expect(result).toBeInstanceOf(ProtocolError);
    expect((result as ProtocolError).message).toContain('this extension speaks v1');
  });

  it('rejects a preview without the frames it would pop (the dialog needs them)', () => {
    const result = parseKernelMessage({
      v: 1,
      type: 'frames.preview',
      frame: 1,
      files: [],
      skipped: [],
      conflicts: [],
      messages_dropped: 0
    });
    expect((result as ProtocolError).message).toContain('"frames"');
  });

  it('checks the notice inside a notice message (the sidebar shows its text)', () => {
    const result = parseKernelMessage({ v: 1, type: 'notice', notice: { id: 1 }, unread: 1 });
    expect((result as ProtocolError).message).toContain('notice.text');
  });

  it('checks the status inside hello', () => {
    const result = parseKernelMessage({ v: 1, type: 'hello', pending: [], status: { phase: 'idle' } });
    expect((result as ProtocolError).message).toContain('status.frames');
  });
});

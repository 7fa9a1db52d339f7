/**
 * The notebook tools' frontend side: this panel's notebook answers the kernel's
 * `notebook.request` (outline, one cell, an edit, the cell part of a rewind or undo, and the
 * cells the agent asked to run, sent when its cell ended: each executes as an ordinary cell,
 * its own frame, unless the user edited it since).
 *
 * Edits go to the live document's shared model (so a collaborative session sees them at
 * once), never to the file on disk. `answerRequest` is pure over an `INotebookDoc`, tested
 * without a browser; `NotebookTools` binds it to a panel's model and its connection: it sends
 * `notebook.attach` whenever the connection becomes ready, and answers every request.
 */
import type { NotebookPanel } from '@jupyterlab/notebook';

import type { LogicianConnection } from './connection';
import type { INotebookCell, INotebookReply, KernelMessage } from './protocol';

type CellType = 'code' | 'markdown' | 'raw';
const CELL_TYPES: readonly string[] = ['code', 'markdown', 'raw'];

/** One cell of the document, as read now. */
export interface IDocCell {
  id: string;
  cell_type: string;
  source: string;
  execution_count?: number | null;
  outputs?: Record<string, unknown>[];
}

/** The notebook as the answers need it: read, insert (with an id), remove, change. */
export interface INotebookDoc {
  readonly path: string;
  cells(): IDocCell[];
  /** Insert a new cell at `index`; `id` given keeps that id. Returns the cell's id. */
  insert(index: number, cell: { cell_type: CellType; source: string; id?: string }): string;
  remove(index: number): void;
  setSource(index: number, source: string): void;
  transact(change: () => void): void;
  /** Execute these cells (by id, in order) as the user's Run would. */
  run(ids: string[]): void;
}

class Refused extends Error {}

type Args = Record<string, unknown>;

/** The reply to one request; an unknown cell id or a malformed request is an `error`. */
export function answerRequest(doc: INotebookDoc, op: string, args: Args): INotebookReply {
  try {
    switch (op) {
      case 'outline':
        return { path: doc.path, cells: doc.cells().map((c, i) => info(c, i, Number(args.head_chars ?? 400))) };
      case 'cell': {
        const [cell, i] = find(doc, args.cell_id);
        return { path: doc.path, cell: info(cell, i, undefined, Number(args.output_chars ?? 20000)) };
      }
      case 'edit':
        return { path: doc.path, ...edit(doc, args) };
      case 'restore':
        return { path: doc.path, ...restore(doc, args) };
      case 'run':
        return { path: doc.path, ...runCells(doc, args) };
      default:
        return { error: `unknown notebook operation ${JSON.stringify(op)}` };
    }
  } catch (err) {
    if (err instanceof Refused) {
      return { path: doc.path, error: err.message };
    }
    throw err;
  }
}

function find(doc: INotebookDoc, id: unknown): [IDocCell, number] {
  const cells = doc.cells();
  const i = cells.findIndex(c => c.id === id);
  if (i < 0) {
    throw new Refused(`no cell has the id ${JSON.stringify(id)} (read the outline again)`);
  }
  return [cells[i], i];
}

function cellType(value: unknown, fallback: string): CellType {
  const t = value === undefined || value === null ? fallback : String(value);
  if (!CELL_TYPES.includes(t)) {
    throw new Refused(`cell_type must be code, markdown or raw, not ${JSON.stringify(value)}`);
  }
  return t as CellType;
}

function edit(doc: INotebookDoc, args: Args): INotebookReply {
  const mode = args.mode;
  if (mode === 'insert') {
    const count = doc.cells().length;
    const at =
      args.after_id !== undefined
        ? find(doc, args.after_id)[1] + 1
        : Math.min(Math.max(Number(args.index ?? count), 0), count);
    const type = cellType(args.cell_type, 'code');
    let id = '';
    doc.transact(() => {
      id = doc.insert(at, { cell_type: type, source: String(args.source ?? '') });
    });
    const [cell, i] = find(doc, id);
    return { before: null, after: info(cell, i) };
  }
  const [cell, i] = find(doc, args.cell_id);
  const before = info(cell, i);
  if (mode === 'delete') {
    doc.transact(() => doc.remove(i));
    return { before, after: null };
  }
  if (mode !== 'replace') {
    throw new Refused(`mode must be insert, replace or delete, not ${JSON.stringify(mode)}`);
  }
  const type = cellType(args.cell_type, cell.cell_type);
  change(doc, i, cell, String(args.source ?? ''), type);
  const [now, j] = find(doc, cell.id);
  return { before, after: info(now, j) };
}

/** A new source (and type: a cell's type changes by a new cell with the same id). */
function change(doc: INotebookDoc, i: number, cell: IDocCell, source: string, type: CellType): void {
  doc.transact(() => {
    if (type === cell.cell_type) {
      doc.setSource(i, source);
    } else {
      doc.remove(i);
      doc.insert(i, { cell_type: type, source, id: cell.id });
    }
  });
}

/** The cell part of a rewind or an undo: each step by id; a cell that no longer holds what
 * the agent left is a conflict, left alone unless `force`. */
function restore(doc: INotebookDoc, args: Args): INotebookReply {
  const applied: string[] = [];
  const conflicts: string[] = [];
  const missing: string[] = [];
  const steps = Array.isArray(args.steps) ? (args.steps as Args[]) : [];
  for (const step of steps) {
    const id = String(step.id);
    const cells = doc.cells();
    const i = cells.findIndex(c => c.id === id);
    if (step.op === 'insert') {
      if (i >= 0) {
        conflicts.push(id);
        continue;
      }
      const at = Math.min(Number(step.index ?? cells.length), cells.length);
      doc.transact(() => {
        doc.insert(at, { cell_type: cellType(step.cell_type, 'code'), source: String(step.source ?? ''), id });
      });
      applied.push(id);
      continue;
    }
    if (i < 0) {
      missing.push(id);
      continue;
    }
    if (cells[i].source !== step.expect && args.force !== true) {
      conflicts.push(id);
      continue;
    }
    if (step.op === 'delete') {
      doc.transact(() => doc.remove(i));
    } else {
      change(doc, i, cells[i], String(step.source ?? ''), cellType(step.cell_type, cells[i].cell_type));
    }
    applied.push(id);
  }
  return { applied, conflicts, missing };
}

/** The cells the agent asked to run: each still holding the source the agent left (`expect`)
 * is executed, in order; one the user changed since is a conflict, one gone is missing. */
function runCells(doc: INotebookDoc, args: Args): INotebookReply {
  const applied: string[] = [];
  const conflicts: string[] = [];
  const missing: string[] = [];
  const wanted = Array.isArray(args.cells) ? (args.cells as Args[]) : [];
  const cells = doc.cells();
  for (const want of wanted) {
    const id = String(want.id);
    const cell = cells.find(c => c.id === id);
    if (!cell) {
      missing.push(id);
    } else if (cell.cell_type !== 'code' || cell.source !== want.expect) {
      conflicts.push(id);
    } else {
      applied.push(id);
    }
  }
  if (applied.length) {
    doc.run(applied);
  }
  return { applied, conflicts, missing };
}

/** A cell for the kernel: the outline's (`head` characters of source) or in full, with its
 * outputs summarised (text cut to `outputChars` head and tail, other data as sizes). */
export function info(cell: IDocCell, index: number, head?: number, outputChars = 20000): INotebookCell {
  const outputs = cell.outputs ?? [];
  const result: INotebookCell = {
    id: cell.id,
    index,
    cell_type: cellType(cell.cell_type, 'code'),
    source: head === undefined ? cell.source : cell.source.slice(0, head),
    execution_count: cell.execution_count ?? null,
    output_kinds: outputs.map(kindOf)
  };
  if (head !== undefined) {
    result.lines = cell.source.split('\n').length;
  } else {
    result.outputs = outputs.map(o => summary(o, outputChars));
  }
  return result;
}

function kindOf(output: Record<string, unknown>): string {
  return String(output.output_type ?? 'output');
}

function textOf(value: unknown): string {
  return Array.isArray(value) ? value.join('') : typeof value === 'string' ? value : '';
}

/** One output, bounded before it crosses the wire: a 50 MB print costs `limit` characters. */
export function summary(output: Record<string, unknown>, limit: number): Record<string, unknown> {
  const kind = kindOf(output);
  if (kind === 'error') {
    const trace = Array.isArray(output.traceback) ? (output.traceback as unknown[]).map(String) : [];
    return { output_type: kind, ename: output.ename, evalue: output.evalue, traceback: trace.slice(-40) };
  }
  const out: Record<string, unknown> = { output_type: kind };
  let text = textOf(output.text);
  const data = (output.data ?? {}) as Record<string, unknown>;
  const sizes: Record<string, number> = {};
  for (const [mime, value] of Object.entries(data)) {
    const raw = typeof value === 'string' || Array.isArray(value) ? textOf(value) : JSON.stringify(value);
    // base64 images: their decoded size
    sizes[mime] = mime.startsWith('image/') && !mime.includes('svg') ? Math.floor((raw.length * 3) / 4) : raw.length;
  }
  if (!text && typeof data['text/plain'] !== 'undefined') {
    text = textOf(data['text/plain']);
  }
  if (Object.keys(sizes).length) {
    out.sizes = sizes;
  }
  if (text.length > limit) {
    const half = Math.floor(limit / 2);
    out.cut = text.length - 2 * half;
    text = text.slice(0, half) + '\n…\n' + text.slice(text.length - half);
  }
  if (text) {
    out.text = text;
  }
  return out;
}

/** Executes a panel's cells by id (`cells.ts`: JupyterLab's cell widgets, not loaded here). */
export type CellRunner = (panel: NotebookPanel, ids: string[]) => Promise<void>;

/** The panel's notebook, through its shared model (the live, collaborative document). */
export function panelDoc(panel: NotebookPanel, execute: CellRunner): INotebookDoc | null {
  const model = panel.content.model;
  if (!model) {
    return null;
  }
  const shared = model.sharedModel;
  return {
    get path() {
      return panel.context.path;
    },
    cells: () =>
      shared.cells.map(c => ({
        id: c.id,
        cell_type: c.cell_type,
        source: c.getSource(),
        execution_count: c.cell_type === 'code' ? (c as any).execution_count : null,
        outputs: c.cell_type === 'code' ? ((c as any).getOutputs() as Record<string, unknown>[]) : []
      })),
    insert: (index, cell) => shared.insertCell(index, { ...cell }).id,
    remove: index => shared.deleteCell(index),
    setSource: (index, source) => shared.cells[index].setSource(source),
    transact: change => shared.transact(change),
    run: ids => void execute(panel, ids)
  };
}

/** Binds a panel's notebook to its connection: attach when ready, answer every request. */
export class NotebookTools {
  constructor(
    private readonly panel: NotebookPanel,
    private readonly conn: LogicianConnection,
    private readonly execute: CellRunner
  ) {
    conn.stateChanged.connect(this._onState, this);
    conn.announced.connect(this._onMessage, this);
    this._onState();
  }

  private _onState(): void {
    if (this.conn.state === 'ready') {
      this.conn
        .ask({ type: 'notebook.attach', path: this.panel.context.path }, 'notebook.attached')
        .catch(() => undefined); // an older kernel: it simply never asks
    }
  }

  private _onMessage(_: LogicianConnection, msg: KernelMessage): void {
    if (msg.type !== 'notebook.request') {
      return;
    }
    const doc = panelDoc(this.panel, this.execute);
    let reply: INotebookReply;
    try {
      reply = doc ? answerRequest(doc, msg.op, msg.args) : { error: 'the notebook is not loaded' };
    } catch (err) {
      reply = { error: `the notebook could not do it: ${String(err)}` };
    }
    this.conn.ask({ type: 'notebook.reply', request: msg.request, ...reply }, 'notebook.received').catch(() => undefined);
  }
}

/**
 * The `logician` comm protocol, version 1, as the extension speaks it.
 *
 * Written against `logician_kernel/jupyter/comm_schema.json` (the kernel side is
 * `logician_kernel/jupyter/comm.py`); `protocol.test.ts` checks both agree. Everything here is
 * pure: parsing never throws, it returns a `ProtocolError` naming the field that is wrong.
 */

export const SCHEMA_VERSION = 1;
export const TARGET = 'logician';

// Mirrors logician_kernel/types/approvals.py (a Python test holds the two to each other).
export const CHOICES = ['allow_once', 'allow_session', 'always_allow', 'deny', 'deny_and_stop'] as const;
export type Choice = (typeof CHOICES)[number];

export const REWIND_MODES = ['both', 'files', 'conversation', 'variables'] as const;
export type RewindMode = (typeof REWIND_MODES)[number];

export interface IStatus {
  thread: string | null;
  /** `rewinding` while a rewind, undo or resume restores paths. */
  phase: 'idle' | 'turn' | 'compaction' | 'branch_summary' | 'rewinding';
  model: string;
  frames: number;
  running_cell?: boolean;
  turn?: number;
  tool_calls?: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd?: number | null;
  budget?: Record<string, number>;
  pending_approvals?: number;
  last_outcome?: string | null;
  /** Records of the audit log that fail their checksum or carry none (0: intact). */
  audit_problems?: number;
  /** Notices not read yet (in the sidebar or with `%logician notices`). */
  unread_notices?: number;
  /** Why *Undo rewind* is off now (null: there is a rewind to undo; kernels before it omit it). */
  undo_refused?: string | null;
}

/** Something Logician says unasked (variables not captured, frames off, ...): kept out of the
 * cells' outputs and shown in the sidebar instead. */
export interface INotice {
  id: number;
  text: string;
  time: string;
  frame: number | null;
  execution_count: number | null;
  cell_id: string | null;
  /** It says Logician stopped recording something (frames off, capture failed). */
  critical: boolean;
  read: boolean;
}

export interface IApprovalRequest {
  request_id: string;
  tool: string;
  call_id?: string;
  description?: string;
  reason?: string;
  suggested_rule?: string;
  preview_kind?: string;
  preview?: string;
}

export interface IFrameRow {
  frame: number;
  execution_count: number | null;
  cell_id: string | null;
  code: string;
  time: string;
  outcome: string | null;
  status: 'open' | 'active' | 'rewound';
  rewound_at?: string | null;
  rewound_by?: number | null;
  files: number;
  skipped?: number;
  /** Paths whose large pre-image the disk budget evicted (absent when none was). */
  evicted?: string[];
  /** "rewind incomplete: N path(s) failed" while a rewind of this frame left paths failed
   * (absent otherwise): the row offers Resume (`frames.resume`). */
  incomplete?: string;
  input_tokens: number;
  output_tokens: number;
}

export interface IPathDetail {
  path: string;
  detail: string;
}

export interface IPreviewFile {
  path: string;
  /** `delete`: a popped cell created it; `recreate`: a popped cell deleted it; `restore`: its
   * bytes put back. */
  action: 'restore' | 'delete' | 'recreate';
}

export type FileKind = 'text' | 'csv' | 'image' | 'notebook' | 'binary';

/** One file a frame changed (`frames.files`). */
export interface IFileRow {
  path: string;
  action: string;
  kind: FileKind;
  before_size: number | null;
  after_size: number | null;
}

/** One side of a file's diff (`frames.diff`): a page of its lines, an image, a notebook's
 * cells, or only its size and sha256. */
export interface IDiffSide {
  /** `refused`: a symlink or a non-file on the way (`note` names it), not followed. */
  state: 'absent' | 'file' | 'uncaptured' | 'refused';
  size: number | null;
  sha256: string | null;
  pages: number;
  page?: number;
  first_line?: number;
  text?: string;
  mime?: string;
  data?: string;
  cells?: { cell_type: string; source: string }[];
  note?: string;
}

export interface IFileDiff {
  frame: number;
  path: string;
  kind: FileKind;
  preview: boolean;
  page: number;
  pages: number;
  before: IDiffSide;
  after: IDiffSide;
  /** A notebook's cells matched by nbdime, in order (only where the kernel has nbdime). */
  cell_matches?: ICellMatch[];
}

/** One row of a notebook's diff as nbdime matched it (indices into the sides' `cells`). */
export interface ICellMatch {
  before: number | null;
  after: number | null;
  /** `changed`: its source changed; `moved`: the same cell elsewhere (`before`: where it was). */
  status: 'same' | 'changed' | 'added' | 'removed' | 'moved';
  /** What changed in it: `source`, `outputs`, `execution_count`, `metadata`, ... */
  changed: string[];
}

/** The files of one directory a rewind would touch, counted (`below`: its subdirectories'
 * too, folded to keep the groups few). */
export interface IPreviewGroup {
  directory: string;
  below: boolean;
  delete: number;
  restore: number;
  /** Of `restore`, the files the popped cells deleted (the rewind recreates them). */
  recreate?: number;
}

export interface IPreview {
  frame: number;
  frames: number[];
  /** The files: all of them, or the first page when `files_total` is sent. */
  files: IPreviewFile[];
  files_total?: number;
  /** The files by directory (`frames.preview.page` lists a group's files). */
  groups?: IPreviewGroup[];
  /** The cells whose frames the rewind pops, oldest first. */
  cells?: { frame: number; execution_count: number | null }[];
  skipped: IPathDetail[];
  skipped_total?: number;
  conflicts: IPathDetail[];
  conflicts_total?: number;
  external_total?: number;
  /** Paths only something outside this kernel changed (a save, another program): left alone
   * unless `include_external` (kernels before attribution omit it). */
  external?: IPathDetail[];
  messages_dropped: number;
  /** What the rewind does to each user variable (kernels before variable checkpoints omit it). */
  variables?: IVariableStep[];
  /** The agent's cell edits the rewind would take back, newest first. */
  cell_edits?: ICellStep[];
  error?: string;
}

export interface ICellStep {
  id: string;
  action: 'remove' | 'restore' | 're-insert';
  detail: string;
}

export interface IVariableStep {
  name: string;
  action: 'restore' | 'delete' | 'not-restorable' | 'not-live';
  detail?: string;
}

export interface IRewindDone {
  ok: true;
  frame: number;
  frames: number[];
  conflicts: string[];
  /** Paths left alone because they were changed outside this kernel. */
  external?: string[];
  summary: string;
  /** One line in the user's words (`Rewound In [2]: 20,000 files deleted`), for a toast. */
  headline?: string;
}

/** What undoing the most recent rewind did (`frames.undo`). */
export interface IUndoDone {
  ok: true;
  frames: number[];
  undoes: number;
  conflicts: string[];
  summary: string;
  /** One line in the user's words (`Rewound In [2]: 20,000 files deleted`), for a toast. */
  headline?: string;
}

/** What completing an interrupted rewind did (`frames.resume`). */
export interface IResumeDone {
  ok: true;
  frames: number[];
  conflicts: string[];
  summary: string;
  /** One line in the user's words (`Rewound In [2]: 20,000 files deleted`), for a toast. */
  headline?: string;
}

/** One tool call of a frame, as its *Rewind this call* button shows it (`frames.calls`). */
export interface ICallLine {
  id: string;
  tool: string;
  /** A few words: the bash command, the path written, the code's first line. */
  words: string;
  /** The files attribution credited to the call. */
  files: string[];
  /** Whether `rewind --call` can take it back now. */
  undoable: boolean;
  /** Why not, when it cannot. */
  why_not: string;
  /** A call rewind took it back (and was not undone). */
  rewound: boolean;
}

/** What rewinding one call did (`frames.rewind_call`); its frame stays. */
export interface ICallRewound {
  ok: true;
  call_id: string;
  frame: number | null;
  /** Paths put back (restored, deleted or recreated). */
  restored: string[];
  /** Paths left alone, with why. */
  left: { path: string; detail: string }[];
  summary: string;
  headline: string;
}

/** How far a rewind, undo or resume has come (`progress`: a few a second, then `finished`). */
export interface IRestoreProgress {
  /** `first_snapshot`: the first snapshot of the workspace reads its files; `capture`: a later
   * full scan reads a cell's thousands of new files. */
  operation: 'rewind' | 'undo' | 'resume' | 'first_snapshot' | 'capture' | 'large_capture';
  /** Paths restored (the first snapshot: files read) so far. */
  done: number;
  /** Paths to restore (files to read) in all (0: nothing to restore, e.g. the conversation only). */
  total: number;
  finished: boolean;
  /** `large_capture`: the big file being copied after a cell (`done`/`total` are its bytes). */
  path?: string;
}

/** What the model picker offers (`models`). */
export interface IModelChoices {
  /** The model this session uses now. */
  current: string;
  provider: string;
  /** The configured profiles and the model each names. */
  profiles: { name: string; model: string | null }[];
  /** The models the configured server lists (empty without a `base_url`). */
  served: string[];
  /** Why the server's list could not be read (null when it answered or was not asked). */
  served_error: string | null;
  /** The profile in use (null: none; kernels before *Connect a model* omit it). */
  profile?: string | null;
  /** Model -> `context_window`, `input_per_mtok`, `output_per_mtok` the configuration sets. */
  configured?: Record<string, Record<string, number>>;
  /** Model -> what the server's `/v1/models` entry says of it, as sent. */
  served_facts?: Record<string, Record<string, unknown>>;
  /** Model -> the kernel's built-in table (the figures its budget prices by), same keys as
   * `configured`, for each listed model the table knows. */
  known?: Record<string, Record<string, number>>;
}

/** What *Connect a model* did (`model.connect`): `ok: false` names the form field to fix. */
export interface IModelConnected {
  ok: boolean;
  /** The field to fix (`base_url`, `api_key`, `model`, `name`, `provider`), or null. */
  field?: string | null;
  /** Why not (never repeating the key). */
  error?: string;
  /** The profile written to the user config file (and in use this session). */
  profile?: string;
  provider?: string;
  base_url?: string;
  /** The model in use now. */
  model?: string;
  /** The models the server lists. */
  models?: string[];
  /** The key stored, masked (`sk-…abcd`); null when none was given. */
  key?: string | null;
  /** The credentials file holding it (mode 0600, outside the workspace). */
  key_file?: string | null;
  config_file?: string;
  said?: string;
}

/** One effective configuration key (`config`). */
export interface IConfigRow {
  key: string;
  /** Its value, secrets masked. */
  value: unknown;
  /** The value as `config set` reads it back (a TOML literal). */
  text: string;
  /** The layer that set it: default, user, project, profile, env or session. */
  layer: string;
  /** Where in that layer (a file and line, an environment variable). */
  where: string;
  restart_required: boolean;
}

/** The effective configuration, as `%logician config` shows it (`config`). */
export interface IConfigShown {
  workspace: string;
  trusted: boolean;
  layers: { name: string; source: string; status: string }[];
  /** The problems `%logician config` lists. */
  notices: string[];
  dropped: string[];
  held_back: string[];
  model_refusal: string | null;
  /** Where the key comes from and whether it is there (never the key). */
  api_key: string | null;
  rows: IConfigRow[];
}

/** What the kernel sends, answers and announcements alike (`re` echoes a request's `id`). */
export type KernelMessage =
  | { type: 'hello'; pending: IApprovalRequest[]; status?: IStatus; notices?: INotice[] }
  | { type: 'error'; error: string; re?: RequestId }
  | { type: 'approvals'; pending: IApprovalRequest[]; re?: RequestId }
  | { type: 'approval.decided'; ok: boolean; request_id: string; re?: RequestId }
  | ({ type: 'status'; re?: RequestId } & IStatus)
  | { type: 'frames'; rows: IFrameRow[]; total: number; offset: number; re?: RequestId }
  | ({ type: 'frames.preview'; re?: RequestId } & IPreview)
  | { type: 'frames.files'; frame: number; rows: IFileRow[]; total: number; offset: number; re?: RequestId }
  | ({ type: 'frames.diff'; re?: RequestId } & IFileDiff)
  | {
      type: 'frames.preview.page';
      frame: number;
      group: string;
      rows: IPreviewFile[];
      total: number;
      offset: number;
      re?: RequestId;
    }
  | ({ type: 'frames.rewind'; re?: RequestId } & IRewindDone)
  | ({ type: 'frames.undo'; re?: RequestId } & IUndoDone)
  | ({ type: 'frames.resume'; re?: RequestId } & IResumeDone)
  | { type: 'frames.calls'; frame: number; calls: ICallLine[]; re?: RequestId }
  | ({ type: 'frames.rewind_call'; re?: RequestId } & ICallRewound)
  | { type: 'frames.undone'; frames: number[]; cell_ids: string[]; at: string; by: number; undoes: number }
  | { type: 'frames.changed'; total: number }
  | { type: 'frames.rewound'; frames: number[]; cell_ids: string[]; at: string; by: number }
  | ({ type: 'approval.requested' } & IApprovalRequest)
  | { type: 'approval.resolved'; request_id: string; choice: string; via?: string }
  | { type: 'document.saved'; path: string | null; recorded: boolean; re?: RequestId }
  | { type: 'notices'; rows: INotice[]; unread: number; re?: RequestId }
  | { type: 'notices.read'; unread: number; re?: RequestId }
  | { type: 'notice'; notice: INotice; unread: number }
  | { type: 'notebook.attached'; pending: number; re?: RequestId }
  | { type: 'notebook.received'; known: boolean; re?: RequestId }
  | { type: 'notebook.request'; request: string; op: NotebookOp; args: Record<string, unknown> }
  | ({ type: 'progress' } & IRestoreProgress)
  | ({ type: 'models'; re?: RequestId } & IModelChoices)
  | { type: 'model.use'; model: string; said: string; re?: RequestId }
  | { type: 'model.default'; model: string; said: string; file: string; re?: RequestId }
  | ({ type: 'model.connect'; re?: RequestId } & IModelConnected)
  | ({ type: 'config'; re?: RequestId } & IConfigShown)
  | { type: 'config.set'; ok: boolean; key: string; said?: string; error?: string; re?: RequestId };

/** What the kernel asks of the notebook a frontend holds (`notebook_tools.ts` answers). */
export type NotebookOp = 'outline' | 'cell' | 'edit' | 'restore' | 'run';

/** One cell as the frontend reports it (`NotebookCell` in comm_messages.py). */
export interface INotebookCell {
  id: string;
  index: number;
  cell_type: 'code' | 'markdown' | 'raw';
  source: string;
  lines?: number;
  execution_count?: number | null;
  output_kinds?: string[];
  outputs?: Record<string, unknown>[];
}

/** The answer to a `notebook.request` (each field for the op that fills it). */
export interface INotebookReply {
  error?: string;
  path?: string;
  cells?: INotebookCell[];
  cell?: INotebookCell;
  before?: INotebookCell | null;
  after?: INotebookCell | null;
  applied?: string[];
  conflicts?: string[];
  missing?: string[];
}

export type RequestId = string | number;

export type FrameTarget = { frame: number } | { cell_id: string };

/** What the extension asks (without `v` and `id`, which `request()` adds). */
export type Request =
  | { type: 'approvals.list' }
  | { type: 'approval.decide'; request_id: string; choice: Choice; note?: string }
  | { type: 'status' }
  | { type: 'frames.list'; offset: number; limit: number }
  | ({ type: 'frames.preview'; force?: boolean; include_external?: boolean } & FrameTarget)
  | { type: 'frames.files'; frame: number; offset?: number; limit?: number }
  | { type: 'frames.diff'; frame: number; path: string; page?: number; preview?: boolean }
  | ({
      type: 'frames.preview.page';
      group: string;
      offset: number;
      limit: number;
      force?: boolean;
      include_external?: boolean;
    } & FrameTarget)
  | ({
      type: 'frames.rewind';
      mode: RewindMode;
      force?: boolean;
      include_external?: boolean;
      /** Leave alone the changes whose writer could not be established. */
      keep_uncertain?: boolean;
    } & FrameTarget)
  | { type: 'frames.undo'; force?: boolean }
  | { type: 'frames.resume'; force?: boolean }
  /** The tool calls of one frame. */
  | { type: 'frames.calls'; frame: number }
  /** `%logician rewind --call ID`: put back what one call changed (recorded, undoable). */
  | { type: 'frames.rewind_call'; call_id: string; force?: boolean }
  /** JupyterLab saved a document (server-relative `path`); `notebook` is this connection's. */
  | { type: 'document.saved'; path: string; time: string; notebook?: string; server_root?: string }
  | { type: 'notices.list' }
  /** The user has read the notices up to `up_to` (every one when absent). */
  | { type: 'notices.read'; up_to?: number }
  | { type: 'notebook.attach'; path?: string }
  | ({ type: 'notebook.reply'; request: string } & INotebookReply)
  | { type: 'models.list' }
  /** Use this model for this kernel's session. */
  | { type: 'model.use'; model: string }
  /** *Make default*: persist this model (and the profile in use) to the user config file. */
  | { type: 'model.default'; model: string }
  /** *Connect a model*: check the server with the key, store the key outside the workspace,
   * write a profile naming it, use it this session. */
  | {
      type: 'model.connect';
      provider: 'openai' | 'anthropic';
      base_url?: string;
      api_key?: string;
      model?: string;
      name?: string;
    }
  | { type: 'config.show' }
  /** `%logician config set KEY VALUE [--persist user]`. */
  | { type: 'config.set'; key: string; value: string; persist: 'session' | 'user' };

export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolError';
  }
}

/** A request as sent on the wire. */
export function request(req: Request, id: RequestId): Record<string, unknown> {
  return { v: SCHEMA_VERSION, id, ...req };
}

type Check = (value: unknown) => boolean;
const isString: Check = v => typeof v === 'string';
const isInt: Check = v => typeof v === 'number' && Number.isInteger(v);
const isArray: Check = v => Array.isArray(v);
const isBool: Check = v => typeof v === 'boolean';
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Required fields per message type: what a view relies on being there. */
const REQUIRED: Record<KernelMessage['type'], Record<string, Check>> = {
  hello: { pending: isArray },
  error: { error: isString },
  approvals: { pending: isArray },
  'approval.decided': { ok: isBool, request_id: isString },
  status: { phase: isString, frames: isInt, input_tokens: isInt, output_tokens: isInt },
  frames: { rows: isArray, total: isInt, offset: isInt },
  'frames.preview': {
    frame: isInt,
    frames: isArray,
    files: isArray,
    skipped: isArray,
    conflicts: isArray,
    messages_dropped: isInt
  },
  'frames.preview.page': { frame: isInt, group: isString, rows: isArray, total: isInt, offset: isInt },
  'frames.files': { frame: isInt, rows: isArray, total: isInt, offset: isInt },
  'frames.diff': { frame: isInt, path: isString, kind: isString, preview: isBool, page: isInt, pages: isInt, before: isObject, after: isObject },
  'frames.rewind': { ok: isBool, frame: isInt, frames: isArray, summary: isString },
  'frames.undo': { ok: isBool, frames: isArray, undoes: isInt, summary: isString },
  'frames.resume': { ok: isBool, frames: isArray, summary: isString },
  'frames.calls': { frame: isInt, calls: isArray },
  'frames.rewind_call': { ok: isBool, call_id: isString, restored: isArray, left: isArray, summary: isString, headline: isString },
  'frames.undone': { frames: isArray, cell_ids: isArray, at: isString, by: isInt, undoes: isInt },
  'frames.changed': { total: isInt },
  'frames.rewound': { frames: isArray, cell_ids: isArray, at: isString, by: isInt },
  'approval.requested': { request_id: isString, tool: isString },
  'approval.resolved': { request_id: isString, choice: isString },
  'document.saved': { recorded: isBool },
  notices: { rows: isArray, unread: isInt },
  'notices.read': { unread: isInt },
  notice: { notice: isObject, unread: isInt },
  'notebook.attached': { pending: isInt },
  'notebook.received': { known: isBool },
  'notebook.request': { request: isString, op: isString, args: isObject },
  progress: { operation: isString, done: isInt, total: isInt, finished: isBool },
  models: { current: isString, provider: isString, profiles: isArray, served: isArray },
  'model.use': { model: isString, said: isString },
  'model.default': { model: isString, said: isString, file: isString },
  'model.connect': { ok: isBool },
  config: { rows: isArray, layers: isArray, notices: isArray },
  'config.set': { ok: isBool, key: isString }
};

export const KERNEL_MESSAGE_TYPES = Object.keys(REQUIRED) as KernelMessage['type'][];

const ROW_FIELDS: Record<string, Check> = {
  frame: isInt,
  code: isString,
  time: isString,
  status: isString,
  files: isInt
};

const NOTICE_FIELDS: Record<string, Check> = { id: isInt, text: isString, time: isString, critical: isBool };

/** Check one message from the kernel; never throws. */
export function parseKernelMessage(data: unknown): KernelMessage | ProtocolError {
  if (!isObject(data)) {
    return new ProtocolError('a logician message must be a JSON object');
  }
  if (data.v !== SCHEMA_VERSION) {
    return new ProtocolError(
      `the kernel speaks logician schema v${describe(data.v)}; this extension speaks v${SCHEMA_VERSION}`
    );
  }
  const type = data.type;
  if (typeof type !== 'string' || !Object.prototype.hasOwnProperty.call(REQUIRED, type)) {
    return new ProtocolError(`unknown logician message type ${describe(type)}`);
  }
  const fields = REQUIRED[type as KernelMessage['type']];
  for (const [name, check] of Object.entries(fields)) {
    if (!check(data[name])) {
      return new ProtocolError(`logician message "${type}": field "${name}" is missing or malformed`);
    }
  }
  if (type === 'hello' && data.status !== undefined) {
    const status = data.status;
    if (!isObject(status)) {
      return new ProtocolError('logician message "hello": field "status" is malformed');
    }
    for (const [name, check] of Object.entries(REQUIRED.status)) {
      if (!check(status[name])) {
        return new ProtocolError(`logician message "hello": field "status.${name}" is missing or malformed`);
      }
    }
  }
  if (type === 'notice') {
    const notice = data.notice as Record<string, unknown>;
    for (const [name, check] of Object.entries(NOTICE_FIELDS)) {
      if (!check(notice[name])) {
        return new ProtocolError(`logician message "notice": field "notice.${name}" is missing or malformed`);
      }
    }
  }
  if (type === 'frames') {
    const rows = data.rows as unknown[];
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      if (!isObject(row)) {
        return new ProtocolError(`logician message "frames": rows[${i}] is not an object`);
      }
      for (const [name, check] of Object.entries(ROW_FIELDS)) {
        if (!check(row[name])) {
          return new ProtocolError(`logician message "frames": rows[${i}].${name} is missing or malformed`);
        }
      }
    }
  }
  return data as unknown as KernelMessage;
}

/** A value from the wire, for an error message (never throws, whatever it is). */
function describe(value: unknown): string {
  try {
    return typeof value === 'string' ? JSON.stringify(value) : String(JSON.stringify(value) ?? typeof value);
  } catch {
    return typeof value;
  }
}

/** The request id an answer echoes, if any. */
export function answerTo(msg: KernelMessage): RequestId | undefined {
  return 're' in msg ? msg.re : undefined;
}

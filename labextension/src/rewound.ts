/**
 * Which cells are greyed out as rewound, and why (pure).
 *
 * A cell is rewound when the newest frame of that cell was popped by a rewind; running the
 * cell again (a new frame) makes it live. The state is rebuilt from the kernel's newest frames
 * when a notebook connects, then kept current from `frames.rewound` announcements.
 */
import { rewoundTooltip } from './format';
import type { IFrameRow } from './protocol';

export interface IRewoundMark {
  at: string | null;
  by: number | null;
  toFrame?: number;
}

export class RewoundCells {
  /** Rebuild from frame rows (any order): the newest frame of each cell decides. */
  resetFromRows(rows: IFrameRow[]): void {
    this._marks.clear();
    const newest = new Map<string, IFrameRow>();
    for (const row of rows) {
      if (!row.cell_id) {
        continue;
      }
      const seen = newest.get(row.cell_id);
      if (!seen || seen.frame < row.frame) {
        newest.set(row.cell_id, row);
      }
    }
    for (const [cellId, row] of newest) {
      if (row.status === 'rewound') {
        this._marks.set(cellId, { at: row.rewound_at ?? null, by: row.rewound_by ?? null });
      }
    }
  }

  /** A rewind popped `frames`, belonging to `cellIds`. */
  rewound(cellIds: string[], frames: number[], at: string, by: number): void {
    const toFrame = frames.length ? Math.min(...frames) : undefined;
    for (const id of cellIds) {
      this._marks.set(id, { at, by, toFrame });
    }
  }

  /** An undo put the rewind `undoes` back: the cells it had greyed are live again. */
  undone(cellIds: string[], undoes: number): void {
    for (const id of cellIds) {
      if (this._marks.get(id)?.by === undoes) {
        this._marks.delete(id);
      }
    }
  }

  /** The cell ran again: it is live. */
  ran(cellId: string): void {
    this._marks.delete(cellId);
  }

  mark(cellId: string): IRewoundMark | undefined {
    return this._marks.get(cellId);
  }

  tooltip(cellId: string): string | undefined {
    const m = this._marks.get(cellId);
    return m ? rewoundTooltip(m.at) : undefined;
  }

  get size(): number {
    return this._marks.size;
  }

  private _marks = new Map<string, IRewoundMark>();
}

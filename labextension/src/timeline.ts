/**
 * The frame timeline's bounded model (pure): which rows are on screen, which pages of frames
 * to ask the kernel for, and a page cache that never holds more than `maxPages` pages.
 *
 * With 10 or 10,000 frames in the thread, the sidebar renders the same few dozen rows and
 * holds at most `maxPages * pageSize` rows: its cost does not grow with the thread.
 */
import type { IFrameRow } from './protocol';

export interface IRange {
  /** First row index (0 = newest frame). */
  start: number;
  /** One past the last row index. */
  end: number;
}

/** Rows to render for a viewport, with `overscan` extra rows above and below. */
export function visibleRange(
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number,
  total: number,
  overscan = 5
): IRange {
  if (total <= 0 || rowHeight <= 0) {
    return { start: 0, end: 0 };
  }
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const count = Math.ceil(Math.max(0, viewportHeight) / rowHeight) + 1;
  const start = Math.max(0, Math.min(total - 1, first) - overscan);
  const end = Math.min(total, first + count + overscan);
  return { start, end: Math.max(start, end) };
}

/** The page indices that cover a range of rows. */
export function pagesFor(range: IRange, pageSize: number): number[] {
  if (range.end <= range.start) {
    return [];
  }
  const first = Math.floor(range.start / pageSize);
  const last = Math.floor((range.end - 1) / pageSize);
  const pages: number[] = [];
  for (let p = first; p <= last; p++) {
    pages.push(p);
  }
  return pages;
}

/**
 * Pages of frame rows, newest first, as the kernel's `frames.list` returns them.
 *
 * Rows are addressed by index (0 = newest). A new frame shifts every index by one, so the
 * cache is dropped whenever `total` changes; the pages on screen are fetched again (one or two
 * requests of `pageSize` rows). When the frames changed but not their number (the frame of a
 * cell that was running when its row was read has closed), `refresh` keeps the rows on screen
 * and has their pages fetched again. Each request carries the generation it was asked in
 * (`markLoading`'s answer), so a page read before a change never passes for a fresh one.
 */
export class FramePages {
  constructor(
    readonly pageSize = 100,
    readonly maxPages = 6
  ) {}

  get total(): number {
    return this._total;
  }

  /** The kernel reported `total` frames; false when nothing changed. */
  setTotal(total: number): boolean {
    if (total === this._total) {
      return false;
    }
    this._total = total;
    this.clear();
    return true;
  }

  clear(): void {
    this._pages.clear();
    this._loading.clear();
    this._stale.clear();
    this._generation++;
  }

  /** The rows held may be out of date (a frame closed: its outcome and buttons changed). They
   * stay on screen, and `missing` names their pages until they are fetched again; a page
   * being fetched now may have been read before the change, so it is asked for again too. */
  refresh(): void {
    for (const page of [...this._pages.keys(), ...this._loading]) {
      this._stale.add(page);
    }
    this._loading.clear();
    this._generation++;
  }

  /** The generation a request asked now belongs to (pass it to `put` with the answer). */
  get generation(): number {
    return this._generation;
  }

  /** Pages of `range` not cached (or stale) and not being fetched (mark them loading before
   * asking). */
  missing(range: IRange): number[] {
    return pagesFor(range, this.pageSize).filter(
      p => (!this._pages.has(p) || this._stale.has(p)) && !this._loading.has(p)
    );
  }

  /** A page is being fetched; the answer is the request's generation, for `put`. */
  markLoading(page: number): number {
    this._loading.add(page);
    return this._generation;
  }

  /** Store a page the kernel sent (rows from `offset`), asked in generation `asked`; evicts the
   * least recently used. An answer asked before the frames last changed is shown only where
   * nothing else is, and its page stays stale (fetched again). */
  put(offset: number, rows: IFrameRow[], total: number, asked = this._generation): void {
    const page = Math.floor(offset / this.pageSize);
    if (asked !== this._generation) {
      if (total === this._total && !this._pages.has(page)) {
        this._pages.set(page, rows);
        this._stale.add(page);
        this._evict();
      }
      return;
    }
    if (total !== this._total) {
      this.setTotal(total);
    }
    this._loading.delete(page);
    this._stale.delete(page);
    this._pages.delete(page);
    this._pages.set(page, rows);
    this._evict();
  }

  /** A page asked in generation `asked` failed to arrive: it may be asked again. */
  failed(offset: number, asked = this._generation): void {
    if (asked === this._generation) {
      this._loading.delete(Math.floor(offset / this.pageSize));
    }
  }

  private _evict(): void {
    while (this._pages.size > this.maxPages) {
      const oldest = this._pages.keys().next().value as number;
      this._pages.delete(oldest);
      this._stale.delete(oldest);
    }
  }

  /** The row at `index`, or undefined while its page is not here. */
  row(index: number): IFrameRow | undefined {
    const page = Math.floor(index / this.pageSize);
    const rows = this._pages.get(page);
    if (rows === undefined) {
      return undefined;
    }
    // touch: most recently used last
    this._pages.delete(page);
    this._pages.set(page, rows);
    return rows[index - page * this.pageSize];
  }

  /** Rows held now (bounded by `maxPages * pageSize`). */
  get held(): number {
    let n = 0;
    for (const rows of this._pages.values()) {
      n += rows.length;
    }
    return n;
  }

  /** The index of a frame if its page is cached. */
  indexOf(frame: number): number | undefined {
    for (const [page, rows] of this._pages) {
      const i = rows.findIndex(r => r.frame === frame);
      if (i >= 0) {
        return page * this.pageSize + i;
      }
    }
    return undefined;
  }

  private _total = -1;
  private _pages = new Map<number, IFrameRow[]>();
  private _loading = new Set<number>();
  private _stale = new Set<number>();
  private _generation = 0;
}

/** Where keyboard focus goes in a list of `total` rows from row `index` on `key` (arrows one
 * row, Page keys `pageRows` rows, Home and End the ends); null for any other key. */
export function nextFocus(key: string, index: number, total: number, pageRows: number): number | null {
  if (total <= 0) {
    return null;
  }
  const step: Record<string, number> = {
    ArrowDown: 1,
    ArrowUp: -1,
    PageDown: Math.max(1, pageRows),
    PageUp: -Math.max(1, pageRows),
    Home: -total,
    End: total
  };
  if (!(key in step)) {
    return null;
  }
  return Math.min(total - 1, Math.max(0, index + step[key]));
}

/** The scroll position that shows row `index` whole, moving as little as possible. */
export function scrollToShow(scrollTop: number, viewportHeight: number, rowHeight: number, index: number): number {
  const top = index * rowHeight;
  if (top < scrollTop) {
    return top;
  }
  if (top + rowHeight > scrollTop + viewportHeight) {
    return Math.max(0, top + rowHeight - viewportHeight);
  }
  return scrollTop;
}

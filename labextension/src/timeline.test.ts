import { describe, expect, it } from 'vitest';

import type { IFrameRow } from './protocol';
import { FramePages, nextFocus, pagesFor, scrollToShow, visibleRange } from './timeline';

/** The rows `frames.list` returns from `offset` for a thread of `total` frames (newest first). */
function page(offset: number, count: number, total: number): IFrameRow[] {
  const rows: IFrameRow[] = [];
  for (let i = offset; i < Math.min(total, offset + count); i++) {
    const frame = total - i;
    rows.push({
      frame,
      execution_count: frame,
      cell_id: `cell-${frame}`,
      code: `print(${frame})`,
      time: '2024-11-29T14:03:09Z',
      outcome: 'ok',
      status: 'active',
      files: 0,
      input_tokens: 0,
      output_tokens: 0
    });
  }
  return rows;
}

/** The same rows as read while their cells ran: open, no outcome yet. */
function running(rows: IFrameRow[]): IFrameRow[] {
  return rows.map(r => ({ ...r, status: 'open', outcome: null }));
}

describe('visibleRange', () => {
  it('renders nothing for an empty timeline', () => {
    expect(visibleRange(0, 400, 24, 0)).toEqual({ start: 0, end: 0 });
    expect(visibleRange(500, 400, 24, -3)).toEqual({ start: 0, end: 0 });
  });

  it('renders nothing when rows have no height yet', () => {
    expect(visibleRange(0, 400, 0, 100)).toEqual({ start: 0, end: 0 });
    expect(visibleRange(0, 400, -1, 100)).toEqual({ start: 0, end: 0 });
  });

  it('starts at the newest row at the top, with overscan below', () => {
    // 400 / 20 = 20 rows on screen, +1 partial, +5 overscan
    expect(visibleRange(0, 400, 20, 1000)).toEqual({ start: 0, end: 26 });
  });

  it('covers the viewport and overscan in the middle', () => {
    // first visible row 50; 11 rows; 5 overscan each side
    expect(visibleRange(1000, 200, 20, 1000)).toEqual({ start: 45, end: 66 });
  });

  it('uses the overscan it is given', () => {
    expect(visibleRange(1000, 200, 20, 1000, 0)).toEqual({ start: 50, end: 61 });
    expect(visibleRange(1000, 200, 20, 1000, 20)).toEqual({ start: 30, end: 81 });
  });

  it('clamps at the bottom, even when scrolled past the end', () => {
    expect(visibleRange(20 * 995, 200, 20, 1000)).toEqual({ start: 990, end: 1000 });
    const past = visibleRange(1e9, 200, 20, 1000);
    expect(past.end).toBe(1000);
    expect(past.start).toBeLessThan(1000);
    expect(past.start).toBeGreaterThanOrEqual(0);
  });

  it('shows every row of a short timeline', () => {
    expect(visibleRange(0, 400, 20, 3)).toEqual({ start: 0, end: 3 });
  });

  it('treats a negative scroll (overscroll bounce) as the top', () => {
    expect(visibleRange(-50, 400, 20, 1000)).toEqual(visibleRange(0, 400, 20, 1000));
  });

  it('renders a few dozen rows however long the thread is', () => {
    for (const total of [10, 1000, 10_000, 1_000_000]) {
      const r = visibleRange(total * 10, 600, 24, total);
      expect(r.end - r.start).toBeLessThanOrEqual(Math.ceil(600 / 24) + 1 + 10);
      expect(r.end).toBeLessThanOrEqual(total);
    }
  });
});

describe('pagesFor', () => {
  it('is empty for an empty range', () => {
    expect(pagesFor({ start: 0, end: 0 }, 100)).toEqual([]);
    expect(pagesFor({ start: 50, end: 40 }, 100)).toEqual([]);
  });

  it('finds the page of a range within one page', () => {
    expect(pagesFor({ start: 0, end: 26 }, 100)).toEqual([0]);
    expect(pagesFor({ start: 100, end: 200 }, 100)).toEqual([1]);
  });

  it('finds both pages of a range across a page boundary', () => {
    expect(pagesFor({ start: 90, end: 111 }, 100)).toEqual([0, 1]);
    expect(pagesFor({ start: 99, end: 101 }, 100)).toEqual([0, 1]);
  });

  it('finds every page of a long range', () => {
    expect(pagesFor({ start: 5, end: 35 }, 10)).toEqual([0, 1, 2, 3]);
  });
});

describe('FramePages', () => {
  it('holds no more than maxPages pages, evicting the least recently put', () => {
    const pages = new FramePages(10, 3);
    const total = 1000;
    pages.setTotal(total);
    for (let p = 0; p < 50; p++) {
      pages.put(p * 10, page(p * 10, 10, total), total);
      expect(pages.held).toBeLessThanOrEqual(3 * 10);
    }
    expect(pages.held).toBe(30);
    // the newest three pages are held, older ones are gone
    expect(pages.row(470)?.frame).toBe(total - 470);
    expect(pages.row(499)?.frame).toBe(total - 499);
    expect(pages.row(0)).toBeUndefined();
    expect(pages.row(469)).toBeUndefined();
  });

  it('keeps a page the timeline is showing (touched by row()) and evicts the least recently used', () => {
    const pages = new FramePages(10, 3);
    pages.setTotal(100);
    pages.put(0, page(0, 10, 100), 100);
    pages.put(10, page(10, 10, 100), 100);
    pages.put(20, page(20, 10, 100), 100);
    expect(pages.row(5)?.frame).toBe(95); // page 0 is on screen again
    pages.put(30, page(30, 10, 100), 100);
    expect(pages.row(5)?.frame).toBe(95);
    expect(pages.row(15)).toBeUndefined(); // page 1 was least recently used
    expect(pages.row(25)?.frame).toBe(75);
    expect(pages.row(35)?.frame).toBe(65);
  });

  it('replaces a page put again without growing', () => {
    const pages = new FramePages(10, 3);
    pages.setTotal(100);
    pages.put(0, page(0, 10, 100), 100);
    pages.put(0, page(0, 10, 100), 100);
    expect(pages.held).toBe(10);
  });

  it('returns the row at an index, or undefined while its page is away', () => {
    const pages = new FramePages(10, 3);
    pages.setTotal(25);
    expect(pages.row(0)).toBeUndefined();
    pages.put(20, page(20, 10, 25), 25);
    expect(pages.held).toBe(5); // the last page is short
    expect(pages.row(20)?.frame).toBe(5);
    expect(pages.row(24)?.frame).toBe(1);
    expect(pages.row(25)).toBeUndefined();
    expect(pages.row(19)).toBeUndefined();
  });

  it('drops the cache when the number of frames changes (indices shift)', () => {
    const pages = new FramePages(10, 3);
    expect(pages.setTotal(30)).toBe(true);
    pages.put(0, page(0, 10, 30), 30);
    pages.markLoading(1);
    expect(pages.setTotal(30)).toBe(false);
    expect(pages.held).toBe(10);
    expect(pages.setTotal(31)).toBe(true);
    expect(pages.total).toBe(31);
    expect(pages.held).toBe(0);
    expect(pages.row(0)).toBeUndefined();
    // the page that was loading for the old total is asked again
    expect(pages.missing({ start: 0, end: 20 })).toEqual([0, 1]);
  });

  it('drops the cache when a page arrives with a new total', () => {
    const pages = new FramePages(10, 3);
    pages.setTotal(30);
    pages.put(0, page(0, 10, 30), 30);
    pages.put(10, page(10, 10, 31), 31);
    expect(pages.total).toBe(31);
    expect(pages.row(0)).toBeUndefined();
    expect(pages.row(10)?.frame).toBe(21);
    expect(pages.held).toBe(10);
  });

  it('asks only for pages neither cached nor loading', () => {
    const pages = new FramePages(10, 6);
    pages.setTotal(100);
    const range = { start: 5, end: 45 };
    expect(pages.missing(range)).toEqual([0, 1, 2, 3, 4]);
    pages.put(10, page(10, 10, 100), 100);
    pages.markLoading(3);
    expect(pages.missing(range)).toEqual([0, 2, 4]);
    pages.put(30, page(30, 10, 100), 100); // the loading page arrived
    expect(pages.missing(range)).toEqual([0, 2, 4]);
    for (const p of [0, 2, 4]) {
      pages.markLoading(p);
    }
    expect(pages.missing(range)).toEqual([]);
  });

  it('asks again for a page that failed to arrive', () => {
    const pages = new FramePages(10, 6);
    pages.setTotal(100);
    pages.markLoading(2);
    expect(pages.missing({ start: 20, end: 30 })).toEqual([]);
    pages.failed(20);
    expect(pages.missing({ start: 20, end: 30 })).toEqual([2]);
    pages.markLoading(2);
    pages.failed(25); // any offset within the page
    expect(pages.missing({ start: 20, end: 30 })).toEqual([2]);
  });

  it('reads a row again when the frames changed but not their number (a running cell ended)', () => {
    const pages = new FramePages(10, 3);
    pages.setTotal(1);
    pages.put(0, running(page(0, 1, 1)), 1);
    expect(pages.row(0)?.status).toBe('open');
    expect(pages.setTotal(1)).toBe(false); // frames.changed after the cell: still one frame
    pages.refresh();
    expect(pages.row(0)?.status).toBe('open'); // shown until the new answer is here
    expect(pages.missing({ start: 0, end: 1 })).toEqual([0]);
    const asked = pages.markLoading(0);
    expect(pages.missing({ start: 0, end: 1 })).toEqual([]);
    pages.put(0, page(0, 1, 1), 1, asked);
    expect(pages.row(0)?.status).toBe('active');
    expect(pages.missing({ start: 0, end: 1 })).toEqual([]);
  });

  it('never lets an answer read before the change pass for a fresh one, in either order', () => {
    for (const oldFirst of [true, false]) {
      const pages = new FramePages(10, 3);
      pages.setTotal(1);
      const before = pages.markLoading(0); // asked while the cell ran
      pages.refresh(); // the cell ended meanwhile
      expect(pages.missing({ start: 0, end: 1 })).toEqual([0]); // asked again
      const after = pages.markLoading(0);
      const answers: [IFrameRow[], number][] = [
        [running(page(0, 1, 1)), before],
        [page(0, 1, 1), after]
      ];
      for (const [rows, asked] of oldFirst ? answers : answers.reverse()) {
        pages.put(0, rows, 1, asked);
      }
      expect(pages.row(0)?.status).toBe('active');
      expect(pages.missing({ start: 0, end: 1 })).toEqual([]);
    }
  });

  it('an old answer where nothing is shown is shown, and its page is asked again', () => {
    const pages = new FramePages(10, 3);
    pages.setTotal(5);
    const before = pages.markLoading(0);
    pages.refresh();
    pages.put(0, running(page(0, 5, 5)), 5, before);
    expect(pages.row(0)?.status).toBe('open');
    expect(pages.missing({ start: 0, end: 5 })).toEqual([0]);
    // an old answer with another total is not shown at all (its indices are not today's)
    const other = new FramePages(10, 3);
    other.setTotal(5);
    const old = other.markLoading(0);
    other.refresh();
    other.put(0, page(0, 4, 4), 4, old);
    expect(other.total).toBe(5);
    expect(other.row(0)).toBeUndefined();
  });

  it('an old request that failed does not cancel the newer one', () => {
    const pages = new FramePages(10, 3);
    pages.setTotal(1);
    const before = pages.markLoading(0);
    pages.refresh();
    pages.markLoading(0);
    pages.failed(0, before);
    expect(pages.missing({ start: 0, end: 1 })).toEqual([]); // the newer one is on its way
  });

  it('clear() forgets pages and loads', () => {
    const pages = new FramePages(10, 6);
    pages.setTotal(100);
    pages.put(0, page(0, 10, 100), 100);
    pages.markLoading(1);
    pages.clear();
    expect(pages.held).toBe(0);
    expect(pages.missing({ start: 0, end: 20 })).toEqual([0, 1]);
  });

  it('finds the index of a cached frame', () => {
    const pages = new FramePages(10, 3);
    pages.setTotal(100);
    pages.put(0, page(0, 10, 100), 100);
    pages.put(40, page(40, 10, 100), 100);
    expect(pages.indexOf(100)).toBe(0);
    expect(pages.indexOf(91)).toBe(9);
    expect(pages.indexOf(57)).toBe(43);
    expect(pages.indexOf(80)).toBeUndefined(); // page 2 is not here
    expect(pages.indexOf(1000)).toBeUndefined();
  });

  it('stays bounded while scrolling through 10,000 frames', () => {
    const total = 10_000;
    const rowHeight = 24;
    const viewport = 600;
    const pages = new FramePages(100, 6);
    const bound = pages.maxPages * pages.pageSize;
    pages.setTotal(total);
    let requests = 0;
    let maxHeld = 0;
    const scrollTo = (scrollTop: number) => {
      const range = visibleRange(scrollTop, viewport, rowHeight, total);
      for (const p of pages.missing(range)) {
        pages.markLoading(p);
        requests++;
        // the kernel answers the page
        pages.put(p * pages.pageSize, page(p * pages.pageSize, pages.pageSize, total), total);
      }
      // the view renders every visible row, and each is the right frame
      for (let i = range.start; i < range.end; i++) {
        expect(pages.row(i)?.frame).toBe(total - i);
      }
      maxHeld = Math.max(maxHeld, pages.held);
      expect(pages.held).toBeLessThanOrEqual(bound);
      expect(pages.missing(range)).toEqual([]);
    };
    // down to the oldest frame, then back up to the newest
    for (let top = 0; top <= total * rowHeight; top += 137) {
      scrollTo(top);
    }
    for (let top = total * rowHeight; top >= 0; top -= 911) {
      scrollTo(top);
    }
    scrollTo(0);
    expect(maxHeld).toBe(bound);
    // each page was asked for about once per pass, not once per scroll step
    expect(requests).toBeLessThanOrEqual(2 * (total / pages.pageSize) + 2 * pages.maxPages);
  });
});

describe('keyboard focus in the timeline', () => {
  it('moves a row with the arrows, a page with Page keys, to the ends with Home and End', () => {
    expect(nextFocus('ArrowDown', 0, 10, 4)).toBe(1);
    expect(nextFocus('ArrowUp', 0, 10, 4)).toBe(0); // stays at the top
    expect(nextFocus('ArrowDown', 9, 10, 4)).toBe(9); // and at the bottom
    expect(nextFocus('PageDown', 3, 10, 4)).toBe(7);
    expect(nextFocus('PageUp', 3, 10, 4)).toBe(0);
    expect(nextFocus('End', 3, 10_000, 4)).toBe(9_999);
    expect(nextFocus('Home', 9_000, 10_000, 4)).toBe(0);
    expect(nextFocus('a', 3, 10, 4)).toBeNull();
    expect(nextFocus('ArrowDown', 0, 0, 4)).toBeNull();
  });

  it('scrolls only as far as needed to show the focused row whole', () => {
    expect(scrollToShow(0, 460, 46, 3)).toBe(0); // already shown
    expect(scrollToShow(0, 460, 46, 10)).toBe(11 * 46 - 460); // just below: its bottom at the edge
    expect(scrollToShow(4600, 460, 46, 50)).toBe(2300); // above: its top at the edge
  });
});

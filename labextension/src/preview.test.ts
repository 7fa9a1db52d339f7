import { describe, expect, it } from 'vitest';

import { cellsLine, dialogTitle, fileWord, GroupPager, groupFiles, groupLabel, inGroup } from './preview';
import type { IPreview, IPreviewFile } from './protocol';

const del = (path: string): IPreviewFile => ({ path, action: 'delete' });
const restore = (path: string): IPreviewFile => ({ path, action: 'restore' });

function preview(fields: Partial<IPreview>): IPreview {
  return { frame: 2, frames: [2, 3], files: [], skipped: [], conflicts: [], messages_dropped: 0, ...fields };
}

describe('groupLabel', () => {
  it('says a directory, its counts and what the rewind does to them', () => {
    expect(groupLabel({ directory: 'data/parts/', below: false, delete: 19998, restore: 0 })).toBe(
      'data/parts/ — 19,998 files created → delete'
    );
    expect(groupLabel({ directory: 'out/', below: false, delete: 0, restore: 3, recreate: 1 })).toBe(
      'out/ — 1 file deleted → recreate, 2 files changed → restore'
    );
    expect(groupLabel({ directory: '', below: false, delete: 1, restore: 2 })).toBe(
      '(top level) — 1 file created → delete, 2 files changed → restore'
    );
    expect(groupLabel({ directory: 'runs/', below: true, delete: 0, restore: 1 })).toBe(
      'runs/ and below — 1 file changed → restore'
    );
  });
});

describe('groupFiles (a kernel that sends no groups)', () => {
  it('groups by directory, sorted, with counts, losing no file', () => {
    const files = [del('data/parts/a.csv'), restore('notes.txt'), del('data/parts/b.csv'), restore('data/x.csv')];
    const groups = groupFiles(files);
    expect(groups.map(g => g.group)).toEqual([
      { directory: '', below: false, delete: 0, restore: 1, recreate: 0 },
      { directory: 'data/', below: false, delete: 0, restore: 1, recreate: 0 },
      { directory: 'data/parts/', below: false, delete: 2, restore: 0, recreate: 0 }
    ]);
    expect(groups.flatMap(g => g.files)).toHaveLength(files.length);
  });

  it('puts a directory path (a trailing slash) under its parent', () => {
    expect(groupFiles([del('made/dir/')]).map(g => g.group.directory)).toEqual(['made/']);
  });
});

describe('inGroup', () => {
  it('holds a directory’s own files, and below it only when folded', () => {
    const parts = { directory: 'data/', below: false, delete: 1, restore: 0 };
    expect(inGroup('data/a.csv', parts)).toBe(true);
    expect(inGroup('data/parts/a.csv', parts)).toBe(false);
    expect(inGroup('data/parts/a.csv', { ...parts, below: true })).toBe(true);
    expect(inGroup('other/a.csv', parts)).toBe(false);
    expect(inGroup('a.csv', { ...parts, directory: '' })).toBe(true);
  });
});

describe('GroupPager', () => {
  it('loads 20,000 files a page at a time, asking from where it stopped', async () => {
    const asked: [number, number][] = [];
    const pager = new GroupPager(20000, async (offset, limit) => {
      asked.push([offset, limit]);
      return Array.from({ length: Math.min(limit, 20000 - offset) }, (_, i) => del(`p${offset + i}`));
    });
    await pager.more();
    await pager.more();
    expect(asked).toEqual([
      [0, 200],
      [200, 200]
    ]);
    expect(pager.rows).toHaveLength(400);
    expect(pager.rows[399].path).toBe('p399');
    expect(pager.complete).toBe(false);
  });

  it('starts from the files the preview sent, and asks nothing when they are all', async () => {
    let asked = 0;
    const pager = new GroupPager(2, async () => {
      asked++;
      return [];
    }, [del('a'), del('b')]);
    expect(pager.complete).toBe(true);
    expect(await pager.more()).toEqual([]);
    expect(asked).toBe(0);
  });

  it('never asks for two pages at once', async () => {
    let release: (rows: IPreviewFile[]) => void = () => undefined;
    let asked = 0;
    const pager = new GroupPager(500, () => {
      asked++;
      return new Promise(resolve => (release = resolve));
    });
    const first = pager.more();
    expect(await pager.more()).toEqual([]); // a page is on its way
    release([del('a')]);
    await first;
    expect(asked).toBe(1);
  });

  it('stops asking when the kernel has no more (the preview changed since)', async () => {
    const pager = new GroupPager(10, async () => []);
    await pager.more();
    expect(pager.ended).toBe(true);
  });
});

describe('cells in the user’s words', () => {
  it('names the cells as In [n], and the dialog title the first one', () => {
    const p = preview({ cells: [{ frame: 2, execution_count: 5 }, { frame: 3, execution_count: null }] });
    expect(cellsLine(p)).toBe('In [5], frame 3');
    expect(dialogTitle(p)).toBe('Rewind to before In [5]?');
  });

  it('falls back to frames for a kernel that names no cells', () => {
    expect(cellsLine(preview({}))).toBe('frame 2, frame 3');
    expect(dialogTitle(preview({}))).toBe('Rewind to before frame 2?');
  });
});

describe('fileWord', () => {
  it('says what the rewind does to each file in the user\'s word', () => {
    expect(fileWord({ path: 'made.csv', action: 'delete' })).toBe('delete');
    expect(fileWord({ path: 'gone.csv', action: 'recreate' })).toBe('recreate');
    expect(fileWord({ path: 'edited.csv', action: 'restore' })).toBe('restore');
  });
});

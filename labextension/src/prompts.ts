/**
 * The prompt box's pure parts: the cell a prompt becomes, and the recent prompts that ↑ and ↓
 * walk through (newest first, no repeats in a row, bounded).
 */

/** Recent prompts kept at most. */
export const HISTORY_SIZE = 100;

/** The cell a prompt runs as: the notebook stays the record of every request. */
export function agentCellSource(prompt: string): string {
  return `%%logician\n${prompt.replace(/\s+$/, '')}`;
}

export class PromptHistory {
  constructor(private readonly _size = HISTORY_SIZE) {}

  /** Remember a prompt that ran (the newest; the walk starts again from it). */
  add(prompt: string): void {
    const text = prompt.trim();
    this._cursor = -1;
    this._draft = '';
    if (!text || this._items[0] === text) {
      return;
    }
    this._items.unshift(text);
    this._items.length = Math.min(this._items.length, this._size);
  }

  /** ↑: the prompt before the one shown (`current`, the unsent draft, is kept for ↓); null at
   * the oldest. */
  up(current: string): string | null {
    if (this._cursor + 1 >= this._items.length) {
      return null;
    }
    if (this._cursor === -1) {
      this._draft = current;
    }
    this._cursor++;
    return this._items[this._cursor];
  }

  /** ↓: the prompt after the one shown, then the draft; null when already at the draft. */
  down(): string | null {
    if (this._cursor === -1) {
      return null;
    }
    this._cursor--;
    return this._cursor === -1 ? this._draft : this._items[this._cursor];
  }

  get items(): readonly string[] {
    return this._items;
  }

  private _items: string[] = [];
  private _cursor = -1;
  private _draft = '';
}

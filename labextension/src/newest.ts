/**
 * Answers that may arrive out of order: a user opens one file's diff, then another, before the
 * kernel answered the first (the diff view asks for its first file by itself as soon as the list
 * is read, so one click is enough). Only the answer to the newest question may be drawn, or the
 * slower, older answer would replace what the user chose last.
 */
export class Newest {
  private _asked = 0;

  /** Call as a question is asked; the check it returns says whether it is still the newest. */
  ask(): () => boolean {
    const asked = ++this._asked;
    return () => asked === this._asked;
  }
}

import { describe, expect, it } from 'vitest';

import { DEFAULT_PREFERENCES, NO_GREY_CLASS, applyPreferences, preferences, readPreferences } from './preferences';

/** A stand-in for `document.body`: only its class list is used. */
function fakeBody(): HTMLElement {
  const classes = new Set<string>();
  return {
    classList: {
      toggle: (name: string, on: boolean) => (on ? classes.add(name) : classes.delete(name), on),
      contains: (name: string) => classes.has(name)
    }
  } as unknown as HTMLElement;
}

describe('preferences', () => {
  it('takes what the Settings Editor says and the default for a value of the wrong type', () => {
    expect(readPreferences({})).toEqual(DEFAULT_PREFERENCES);
    expect(
      readPreferences({ pageSize: 50, confirmRewind: false, greyRewoundCells: false, diffLayout: 'unified' })
    ).toEqual({
      pageSize: 50,
      confirmRewind: false,
      greyRewoundCells: false,
      diffLayout: 'unified'
    });
    expect(
      readPreferences({ pageSize: 'lots', confirmRewind: 'no', greyRewoundCells: null, diffLayout: 'sideways' })
    ).toEqual(
      DEFAULT_PREFERENCES
    );
  });

  it('turns the greying of rewound cells off and on again on the page', () => {
    const body = fakeBody();
    applyPreferences({ ...DEFAULT_PREFERENCES, greyRewoundCells: false, confirmRewind: false }, body);
    expect(body.classList.contains(NO_GREY_CLASS)).toBe(true);
    expect(preferences.confirmRewind).toBe(false);
    applyPreferences(DEFAULT_PREFERENCES, body);
    expect(body.classList.contains(NO_GREY_CLASS)).toBe(false);
    expect(preferences.confirmRewind).toBe(true);
  });
});

/**
 * The user's preferences from JupyterLab's Settings Editor (schema/plugin.json), kept current
 * when the user changes them. Only UI preferences live there; everything the kernel does is
 * its configuration (`%logician config`, the sidebar's configuration section).
 */
import type { ISettingRegistry } from '@jupyterlab/settingregistry';

export interface IPreferences {
  /** Frames the timeline asks the kernel for at a time. */
  pageSize: number;
  /** Show the rewind dialog (preview and choices) before rewinding; off: rewind at once with
   * the defaults (conflicting files left alone), the toast saying what was kept. */
  confirmRewind: boolean;
  /** Grey out the cells (input and outputs) of rewound frames. */
  greyRewoundCells: boolean;
  /** How the diff tab lays out a text file: two panes or one unified column. */
  diffLayout: DiffLayout;
}

/** How a text diff is laid out: two panes (before | after) or one unified column. */
export type DiffLayout = 'side-by-side' | 'unified';

export const DEFAULT_PREFERENCES: IPreferences = {
  pageSize: 100,
  confirmRewind: true,
  greyRewoundCells: true,
  diffLayout: 'side-by-side'
};

/** The preferences in effect (read by the dialog and the cell marker when they act). */
export const preferences: IPreferences = { ...DEFAULT_PREFERENCES };

/** The body class that turns the greying of rewound cells off (style/index.css). */
export const NO_GREY_CLASS = 'lk-mod-noGreyRewound';

/** Copy what `composite` says over the defaults, ignoring a value of the wrong type. */
export function readPreferences(composite: Partial<Record<keyof IPreferences, unknown>>): IPreferences {
  const pick = <K extends keyof IPreferences>(key: K, ok: (v: unknown) => boolean): IPreferences[K] =>
    (ok(composite[key]) ? composite[key] : DEFAULT_PREFERENCES[key]) as IPreferences[K];
  return {
    pageSize: pick('pageSize', v => typeof v === 'number' && Number.isInteger(v) && v > 0),
    confirmRewind: pick('confirmRewind', v => typeof v === 'boolean'),
    greyRewoundCells: pick('greyRewoundCells', v => typeof v === 'boolean'),
    diffLayout: pick('diffLayout', v => v === 'side-by-side' || v === 'unified')
  };
}

/** Apply `next` now: the shared object and the page's class. */
export function applyPreferences(next: IPreferences, body: HTMLElement = document.body): void {
  Object.assign(preferences, next);
  body.classList.toggle(NO_GREY_CLASS, !next.greyRewoundCells);
}

/** Where a preference the page changes itself (the diff tab's layout toggle) is saved. */
let save: ((key: keyof IPreferences, value: unknown) => void) | null = null;

/** Change one preference from the page: in effect now, and saved as the Settings Editor saves
 * it, so the next tab and the next session start with it. */
export function setPreference<K extends keyof IPreferences>(key: K, value: IPreferences[K]): void {
  applyPreferences({ ...preferences, [key]: value });
  save?.(key, value);
}

/** Load the plugin's settings and follow their changes; the defaults when there are none. */
export async function followSettings(registry: ISettingRegistry | null, pluginId: string): Promise<void> {
  applyPreferences(DEFAULT_PREFERENCES);
  if (!registry) {
    return;
  }
  try {
    const loaded = await registry.load(pluginId);
    const update = () => applyPreferences(readPreferences(loaded.composite as Partial<Record<keyof IPreferences, unknown>>));
    update();
    loaded.changed.connect(update);
    save = (key, value) => void loaded.set(key, value as never).catch(() => undefined);
  } catch {
    // the defaults stand
  }
}

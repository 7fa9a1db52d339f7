/**
 * JupyterLab's buttons (`jp-Button` of @jupyterlab/ui-components), for the sidebar's and the
 * dialog's own buttons: coloured from the theme's `--jp-*` variables (style/index.css), so
 * they read the same in the light, dark and high-contrast themes.
 */

export type ButtonKind = 'accept' | 'warn' | 'reject' | 'default';

export function jpButton(label: string, kind: ButtonKind = 'default', title = '', extra = ''): HTMLButtonElement {
  const node = document.createElement('button');
  node.type = 'button';
  node.className = `jp-Button jp-mod-small lk-Button lk-mod-${kind}${extra ? ` ${extra}` : ''}`;
  node.textContent = label;
  if (title) {
    node.title = title;
  }
  return node;
}

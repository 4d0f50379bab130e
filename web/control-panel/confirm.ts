// The one confirmation dialog of the panel: every action that changes a room asks first.

import { element } from './dom.ts';

const dialog = element<HTMLDialogElement>('confirm-dialog');
const title = element('confirm-title');
const text = element('confirm-text');
const ok = element<HTMLButtonElement>('confirm-ok');

export interface Confirmation {
  title: string;
  text: string;
  /** The label of the button that goes ahead. */
  action: string;
  danger?: boolean;
}

/** Shows the dialog; true when the operator chose the action, false on Cancel or Escape. */
export function confirmAction(c: Confirmation): Promise<boolean> {
  title.textContent = c.title;
  text.textContent = c.text;
  ok.textContent = c.action;
  ok.className = c.danger ? 'danger' : '';
  dialog.returnValue = '';
  const opener = document.activeElement as HTMLElement | null;
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener(
      'close',
      () => {
        opener?.focus();
        resolve(dialog.returnValue === 'ok');
      },
      { once: true },
    );
  });
}

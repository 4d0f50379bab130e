// Small DOM helpers of the panel's views.

export function element<T extends HTMLElement = HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`#${id} missing`);
  return found as T;
}

type Attributes = Record<string, string | boolean | undefined>;

/** An element with attributes (false/undefined left out) and children (text or elements). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    node.setAttribute(name, value === true ? '' : value);
  }
  node.append(...children);
  return node;
}

export type Tone = 'info' | 'ok' | 'warn' | 'error';

/** A notice: an error interrupts (alert); progress and success are announced politely (status). */
export function setNotice(target: HTMLElement, text: string, tone: Tone): void {
  target.className = `notice ${tone}`;
  target.setAttribute('role', tone === 'error' ? 'alert' : 'status');
  target.textContent = text;
}

export const formatNumber = (n: number | undefined): string => (n === undefined ? '–' : n.toLocaleString('en'));

// The form that creates a room or edits one: every setting (settings-fields.ts), grouped; the API's 400 shown
// next to the field it names.

import { element, h, setNotice } from './dom.ts';
import { isoToLocalInput, localInputToIso, utcNote, zoneName } from './local-time.ts';
import { FIELDS, fieldFor, type Field, type FormValues } from './settings-fields.ts';

const ui = {
  card: element('settings-card'),
  title: element('settings-title'),
  form: element<HTMLFormElement>('settings-form'),
  fields: element('settings-fields'),
  save: element<HTMLButtonElement>('settings-save'),
  status: element('settings-status'),
};

const idOf = (name: string) => `s-${name.replaceAll('.', '-').replaceAll('_', '-')}`;

function control(field: Field): HTMLElement {
  const id = idOf(field.name);
  const described = `${id}-help ${id}-error`;
  const common = { id, name: field.name, 'aria-describedby': described };
  switch (field.kind) {
    case 'bool':
      return h('input', { ...common, type: 'checkbox' });
    case 'select':
      return h('select', common, ...(field.options ?? []).map((o) => h('option', { value: o }, o === '' ? '(none)' : o)));
    case 'webhooks':
    case 'lines':
      return h('textarea', { ...common, rows: '3', spellcheck: 'false', autocomplete: 'off' });
    case 'template':
      return h('textarea', { ...common, rows: '8', spellcheck: 'false', autocomplete: 'off', class: 'mono' });
    case 'secret':
      return h('input', { ...common, type: 'password', autocomplete: 'new-password' });
    case 'int':
    case 'number':
      return h('input', { ...common, type: 'text', inputmode: field.kind === 'int' ? 'numeric' : 'decimal', autocomplete: 'off' });
    case 'time': {
      // A picker in the operator's time zone, to the second; the UTC value it stands for is shown under it.
      const picker = h('input', { ...common, type: 'datetime-local', step: '1', 'aria-describedby': `${described} ${id}-utc` });
      picker.addEventListener('input', () => (element(`${id}-utc`).textContent = utcNote(picker.value)));
      return picker;
    }
    default:
      return h('input', { ...common, type: 'text', autocomplete: 'off', spellcheck: 'false' });
  }
}

function fieldBlock(field: Field): HTMLElement {
  const id = idOf(field.name);
  const input = control(field);
  const label = h('label', { for: id, class: field.kind === 'bool' ? 'inline' : undefined }, field.label);
  const parts = field.kind === 'bool' ? [h('div', { class: 'check' }, input, label)] : [label, input];
  return h(
    'div',
    { class: field.kind === 'webhooks' || field.kind === 'lines' || field.kind === 'template' ? 'field span-2' : 'field', 'data-field': field.name },
    ...parts,
    ...(field.kind === 'time' ? [h('p', { class: 'hint mono', id: `${id}-utc` }, 'Not scheduled.')] : []),
    h('p', { class: 'hint', id: `${id}-help` }, field.kind === 'time' ? `${field.help} (Your time zone: ${zoneName()}.)` : field.help),
    h('p', { class: 'field-error', id: `${id}-error`, role: 'alert' }),
  );
}

const FOLDED = ['Webhooks', 'Inlet', 'Waiting page', 'OpenID Connect'];

/** The form's fields, built once from FIELDS. */
export function buildSettingsForm(): void {
  const groups = [...new Set(FIELDS.map((f) => f.group))];
  ui.fields.replaceChildren(
    ...groups.map((group) => {
      const fields = h('div', { class: 'grid-2' }, ...FIELDS.filter((f) => f.group === group).map(fieldBlock));
      // The groups most rooms leave empty fold away (a long form on a phone); they open when set or at fault.
      return FOLDED.includes(group)
        ? h('details', { class: 'group', 'data-group': group }, h('summary', {}, group), fields)
        : h('fieldset', { class: 'group' }, h('legend', {}, group), fields);
    }),
  );
}

function input(name: string): HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement {
  return element(idOf(name)) as HTMLInputElement;
}

export function readValues(): FormValues {
  const values: FormValues = {};
  for (const field of FIELDS) {
    const el = input(field.name);
    values[field.name] = field.kind === 'bool' ? (el as HTMLInputElement).checked : field.kind === 'time' ? localInputToIso(el.value) : el.value;
  }
  return values;
}

export function clearErrors(): void {
  for (const field of FIELDS) {
    input(field.name).removeAttribute('aria-invalid');
    element(`${idOf(field.name)}-error`).textContent = '';
  }
  setNotice(ui.status, '', 'info');
}

/** Opens the form for a new room (`editing` undefined) or for the room named. */
export function openSettings(values: FormValues, editing: string | undefined): void {
  for (const field of FIELDS) {
    const el = input(field.name);
    if (field.kind === 'bool') (el as HTMLInputElement).checked = values[field.name] === true;
    else if (field.kind === 'time') {
      el.value = isoToLocalInput(String(values[field.name] ?? ''));
      element(`${idOf(field.name)}-utc`).textContent = utcNote(el.value);
    } else el.value = String(values[field.name] ?? '');
  }
  for (const group of ui.fields.querySelectorAll('details')) {
    (group as HTMLDetailsElement).open = FIELDS.some((f) => f.group === group.dataset.group && f.kind !== 'bool' && String(values[f.name] ?? '') !== '');
  }
  (input('event_id') as HTMLInputElement).readOnly = editing !== undefined;
  ui.title.textContent = editing === undefined ? 'New room' : `Settings of room ${editing}`;
  ui.save.textContent = editing === undefined ? 'Create room' : 'Save settings';
  clearErrors();
  ui.card.hidden = false;
  ui.title.scrollIntoView({ block: 'start' });
  ui.title.focus();
}

export function closeSettings(): void {
  ui.card.hidden = true;
}

/**
 * Shows every problem the API listed (`problems` of its 400: "field: rule" each) beside the field it names —
 * all at once — with their count above the buttons, and moves focus to the first field at fault. A problem
 * naming no field of the form goes in the status.
 */
export function showProblems(messages: readonly string[]): void {
  if (messages.length <= 1) {
    showProblem(messages[0] ?? 'the server refused the settings');
    return;
  }
  const unplaced: string[] = [];
  let first: HTMLElement | undefined;
  for (const message of messages) {
    const { field, rule } = fieldFor(message);
    if (field === undefined) {
      unplaced.push(rule);
      continue;
    }
    const el = input(field);
    const folded = el.closest('details');
    if (folded) folded.open = true;
    el.setAttribute('aria-invalid', 'true');
    const error = element(`${idOf(field)}-error`);
    error.textContent = error.textContent ? `${error.textContent}; ${rule}` : `${field}: ${rule}`;
    first ??= el;
  }
  const count = `${messages.length} problems`;
  setNotice(ui.status, `Not saved — ${count}, each shown beside its field${unplaced.length ? `; also: ${unplaced.join('; ')}` : ''}.`, 'error');
  first?.focus();
}

/** Shows the API's message next to the field it names (or above the buttons), and moves focus there. */
export function showProblem(message: string): void {
  const { field, rule } = fieldFor(message);
  if (field === undefined) {
    setNotice(ui.status, `Not saved — ${message}`, 'error');
    return;
  }
  const el = input(field);
  const folded = el.closest('details');
  if (folded) folded.open = true;
  el.setAttribute('aria-invalid', 'true');
  element(`${idOf(field)}-error`).textContent = `${field}: ${rule}`;
  setNotice(ui.status, `Not saved — ${field}: ${rule}`, 'error');
  el.focus();
}

export function settingsStatus(text: string, tone: 'info' | 'ok' | 'error'): void {
  setNotice(ui.status, text, tone);
}

export function settingsBusy(busy: boolean): void {
  ui.save.disabled = busy;
}

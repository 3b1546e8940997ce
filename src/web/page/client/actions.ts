/**
 * The person's actions and the page's keys, as data. Every action —
 * merge, merge queue, discard, retry, approve (with its plan editable first), pause and resume — opens
 * the one confirmation dialog; only its confirm button sends the POST, and a refusal is shown in the
 * server's own words. In read-only mode no action control is built at all, and the action keys do nothing.
 */
export const ACTIONS_JS = String.raw`
import { el, fill } from './dom.js';
import { post, taskPath } from './api.js';

/** Which statuses each task action applies to (the engine's table; the server refuses the rest anyway). */
export const ALLOWED = {
  merge: ['verified'],
  discard: ['verified', 'failed', 'conflict', 'awaiting-approval'],
  retry: ['failed', 'conflict', 'discarded'],
  approve: ['awaiting-approval'],
};

/** Each action: its button label, the question asked first, and the request it makes once confirmed. */
export const ACTIONS = {
  merge: { label: 'merge', task: true, ask: (id) => 'Merge ' + id + ' into base?', request: (id) => [taskPath(id, 'merge'), {}] },
  discard: { label: 'discard', task: true, ask: (id) => 'Discard ' + id + '? Its branch and worktree are deleted.', request: (id) => [taskPath(id, 'discard'), {}] },
  retry: { label: 'retry', task: true, ask: (id) => 'Retry ' + id + ' with a fresh budget?', request: (id) => [taskPath(id, 'retry'), {}] },
  approve: { label: 'approve plan', task: true, plan: true, ask: (id) => 'Approve the plan of ' + id + ' (edit it first if you like)?', request: (id, plan) => [taskPath(id, 'approve'), plan === null ? {} : { plan }] },
  'merge-all': { label: 'merge queue', task: false, ask: () => 'Merge every verified task, each checked again on the last merge?', request: () => ['/api/merge-all', {}] },
  pause: { label: 'pause', task: false, ask: () => 'Pause the fleet? Running attempts finish; no new one starts.', request: () => ['/api/pause', { paused: true }] },
  resume: { label: 'resume', task: false, ask: () => 'Resume the fleet?', request: () => ['/api/pause', { paused: false }] },
};

/**
 * The page's keys: each entry is the keys (KeyboardEvent.key values), the command and what it does. The
 * key handler and the help dialog both read this one table.
 */
export const KEYS = [
  { keys: ['j', 'ArrowDown'], command: 'select-down', help: 'select the next task' },
  { keys: ['k', 'ArrowUp'], command: 'select-up', help: 'select the previous task' },
  { keys: ['g', 'Home'], command: 'select-first', help: 'select the first task' },
  { keys: ['G', 'End'], command: 'select-last', help: 'select the last task' },
  { keys: ['PageDown'], command: 'page-down', help: 'select a page further down' },
  { keys: ['PageUp'], command: 'page-up', help: 'select a page further up' },
  { keys: ['l', 'ArrowRight'], command: 'next-tab', help: 'next detail tab' },
  { keys: ['h', 'ArrowLeft'], command: 'prev-tab', help: 'previous detail tab' },
  { keys: ['1', '2', '3', '4', '5', '6', '7'], command: 'tab', help: 'detail tab by number: plan, output, diff, checks, review, history, conflicts' },
  { keys: ['m'], command: 'merge', help: 'merge the selected task (asks first)', action: true },
  { keys: ['M'], command: 'merge-all', help: 'merge queue: every verified task (asks first)', action: true },
  { keys: ['d'], command: 'discard', help: 'discard the selected task (asks first)', action: true },
  { keys: ['r'], command: 'retry', help: 'retry the selected task (asks first)', action: true },
  { keys: ['a'], command: 'approve', help: 'approve the selected task\u2019s plan, editable first (asks first)', action: true },
  { keys: ['p'], command: 'pause', help: 'pause or resume the fleet (asks first)', action: true },
  { keys: ['t'], command: 'view', help: 'switch between the tasks and the report' },
  { keys: ['?'], command: 'help', help: 'show the keys' },
];

/** The command a key event triggers, or null. Keys typed into a text field or with Ctrl/Alt/Meta are not commands. */
export function commandFor(event, readOnly) {
  if (event.ctrlKey || event.altKey || event.metaKey) return null;
  const t = event.target;
  if (t && (t.tagName === 'TEXTAREA' || t.tagName === 'INPUT' || t.isContentEditable)) return null;
  const entry = KEYS.find((k) => k.keys.includes(event.key));
  if (!entry || (entry.action && readOnly)) return null;
  return entry.command;
}

/** The confirmation dialog: one <dialog>, asked once per action; resolves when done or cancelled. */
export class Confirm {
  constructor(dialog, onDone) {
    this.dialog = dialog;
    this.onDone = onDone;
    this.text = dialog.querySelector('#confirm-text');
    this.plan = dialog.querySelector('#confirm-plan');
    this.error = dialog.querySelector('#confirm-error');
    this.ok = dialog.querySelector('#confirm-ok');
    this.cancel = dialog.querySelector('#confirm-cancel');
    this.pending = null;
    this.ok.addEventListener('click', (e) => {
      e.preventDefault();
      this.confirm();
    });
    this.cancel.addEventListener('click', (e) => {
      e.preventDefault();
      dialog.close('cancel');
    });
  }

  /** Asks about an action on a task (id, or null for a fleet action); plan: the text to edit for approve. */
  open(name, id, plan) {
    const action = ACTIONS[name];
    this.pending = { name, id, action };
    this.dialog.dataset.action = name;
    this.text.textContent = action.ask(id);
    this.plan.hidden = !action.plan;
    this.plan.value = action.plan ? plan || '' : '';
    fill(this.error);
    this.ok.textContent = action.label;
    this.ok.disabled = false;
    this.dialog.showModal();
    (action.plan ? this.plan : this.ok).focus();
  }

  async confirm() {
    const p = this.pending;
    if (p === null || this.ok.disabled) return;
    this.ok.disabled = true;
    fill(this.error, el('span', 'dim', 'sending\u2026'));
    const [path, body] = p.action.request(p.id, p.action.plan ? this.plan.value : null);
    try {
      await post(path, body);
      this.pending = null;
      this.dialog.close('ok');
      this.onDone(null, p);
    } catch (e) {
      this.ok.disabled = false;
      fill(this.error, el('span', 'refusal', e.message));
      this.onDone(e, p);
    }
  }
}
`;

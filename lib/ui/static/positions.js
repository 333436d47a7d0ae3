// The named positions on the live page: GET /robot/positions as buttons (the robot description's and the taught
// ones, marked), each a hold-to-run button (held HOLD_MS, with its progress shown, before POST /robot/move/named
// goes out: one click never moves the arm), and the teach form: PUT /robot/positions/{name} saves where the arm
// stands under a name.
import { holdToRun } from './hold.js';
import { whileHeld } from './held.js';

export const HOLD_MS = 700;
const NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

/**
 * `root` is the motion panel's positions area; `api(path, init)` sends with the token; `speed()` the move's
 * speed; `armed()` / `refuse(el)` as for every control; `log(source, line)` for refusals.
 */
export function positionsPanel({ root, api, speed, armed, refuse, log }) {
  const list = root.querySelector('[data-positions]');
  const hint = root.querySelector('[data-hold-hint]');
  const form = root.querySelector('form[data-teach]');
  const nameInput = form.querySelector('input[name="name"]');
  const teachOut = form.querySelector('[data-teach-result]');
  root.style.setProperty('--hold-ms', `${HOLD_MS}ms`);

  const idleHint = hint.textContent;
  const say = (text, state) => {
    hint.textContent = text;
    hint.dataset.hint = state;
  };

  async function moveTo(name) {
    const response = await api('/robot/move/named', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name, speed: speed() }),
    });
    // The move answers when it has ended (the motion panel says how); the hint goes back to how to move.
    say(idleHint, 'idle');
    if (!response.ok) {
      const body = await response.json().catch(() => ({}));
      log('move', `${name}: ${response.status} ${typeof body.detail === 'string' ? body.detail : ''}`);
    }
  }

  function button(position) {
    const el = document.createElement('button');
    el.type = 'button';
    el.className = 'hold-to-run';
    el.dataset.position = position.name;
    el.dataset.source = position.source ?? 'srdf';
    el.dataset.control = '';
    el.title = `${position.description || position.name}: hold ${HOLD_MS / 1000} s to move there`;
    el.setAttribute('aria-label', `${position.name}: hold to move there`);
    el.setAttribute('aria-describedby', 'hold-hint');
    const label = document.createElement('span');
    label.textContent = position.name;
    el.append(label);
    if (position.source === 'taught') {
      const tag = document.createElement('span');
      tag.className = 'tag';
      tag.textContent = 'taught';
      el.append(tag);
    }
    const run = holdToRun({ holdMs: HOLD_MS });
    whileHeld(el, {
      start: () => {
        if (!armed()) return refuse(el);
        say(`keep holding to move to ${position.name}…`, 'holding');
        run.press(() => {
          el.classList.add('ran');
          say(`moving to ${position.name} (STOP or Esc halts it)`, 'moving');
          void moveTo(position.name);
        });
      },
      end: () => {
        el.classList.remove('ran');
        if (run.release() === 'short')
          say(`not moved: hold ${position.name} for ${HOLD_MS / 1000} s to move there`, 'short');
      },
    });
    return el;
  }

  async function load() {
    const response = await api('/robot/positions');
    if (!response.ok) return;
    const positions = await response.json();
    list.replaceChildren(...positions.map(button));
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const name = nameInput.value.trim();
    if (!armed()) return refuse(nameInput);
    if (!NAME.test(name)) {
      teachOut.textContent = 'a name starts with a letter or _, then letters, digits, _ or - (at most 64)';
      teachOut.dataset.result = 'error';
      return;
    }
    // No joints: where the arm stands now.
    const response = await api(`/robot/positions/${encodeURIComponent(name)}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const body = await response.json().catch(() => ({}));
    if (response.ok) {
      teachOut.textContent = `saved ${name} where the arm stands`;
      teachOut.dataset.result = 'saved';
      nameInput.value = '';
      await load();
    } else {
      teachOut.textContent = `not saved: ${response.status} ${typeof body.detail === 'string' ? body.detail : ''}`;
      teachOut.dataset.result = 'error';
    }
  });

  return { load };
}

// The jog panel of the live page: per joint (J1..J7) and per Cartesian axis (x y z a b c, in the base or the
// tool frame) a minus and a plus button that jog while held (held.js), a speed slider, and the server's account
// (jogging or not, the limiting reason). The commands go over the jog WebSocket, GET /robot/jog, opened at the
// first press and closed a while after the last release; the dead-man itself is hold.js's jogHold.
import { AXES, axisCommand, JOINT_COUNT, jogHold, jointCommand } from './hold.js';
import { releaseAll, whileHeld } from './held.js';

const TTL_MS = 200;
/** The socket stays open this long after the last release (a next press starts at once), then closes. */
const IDLE_CLOSE_MS = 5000;
/** Each axis's label and its name for screen readers (KUKA's A, B, C: turns about z, y, x). */
const AXIS_NAMES = {
  x: ['x', 'TCP x'],
  y: ['y', 'TCP y'],
  z: ['z', 'TCP z'],
  a: ['A', 'TCP A (turn about z)'],
  b: ['B', 'TCP B (turn about y)'],
  c: ['C', 'TCP C (turn about x)'],
};

/**
 * Builds the panel in `root` (the section of index.html). `token()` is the page's token, `armed()` whether the
 * page holds an accepted one, `refuse()` says why a control cannot act; `jogUrl` the socket's address.
 */
export function jogPanel({ root, token, armed, refuse, jogUrl = defaultUrl() }) {
  const stateEl = root.querySelector('[data-jog-state]');
  const speedInput = root.querySelector('[data-jog-speed]');
  const speedOut = root.querySelector('[data-jog-speed-value]');
  const frame = () => root.querySelector('[data-jog-frame]:checked')?.value ?? 'base';
  const speed = () => Number(speedInput.value);
  speedInput.addEventListener('input', () => {
    speedOut.textContent = `${Math.round(speed() * 100)} %`;
  });

  let socket;
  let idleTimer;
  const show = (state, text) => {
    stateEl.dataset.jogState = state;
    stateEl.textContent = text;
  };
  const send = (command) => {
    if (socket?.readyState !== WebSocket.OPEN) return false;
    socket.send(JSON.stringify(command));
    return true;
  };
  const hold = jogHold({ send, ttlMs: TTL_MS });
  /** Ends any jog at once and forgets the hold (STOP, Esc, a stop from elsewhere: a new press starts anew). */
  const stopped = () => {
    releaseAll('stop');
    hold.linkClosed();
  };

  const openSocket = () => {
    clearTimeout(idleTimer);
    if (socket && socket.readyState <= WebSocket.OPEN) return;
    // A browser cannot set the Authorization header on a WebSocket: the token goes as a subprotocol value.
    const protocols = token() ? [PROTOCOL, `armgate.token.${base64url(token())}`] : [PROTOCOL];
    const opened = new WebSocket(jogUrl, protocols);
    socket = opened;
    show('connecting', 'connecting to the jog socket');
    let wasOpen = false;
    opened.addEventListener('open', () => {
      wasOpen = true;
      // A button pressed while the socket was opening: its command goes out now.
      if (!hold.resend()) show('idle', 'at rest');
    });
    opened.addEventListener('message', (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      showStatus(message);
    });
    opened.addEventListener('close', (event) => {
      if (socket === opened) socket = undefined;
      const wasHeld = hold.linkClosed();
      if (wasHeld) releaseAll('the jog socket closed');
      if (event.code === 1000 && !wasHeld) return show('idle', 'at rest');
      // Refused before the upgrade (an HTTP answer), a browser sees only 1006 and no reason.
      const why =
        event.reason ||
        (wasOpen
          ? `connection lost (code ${event.code})`
          : 'refused (a read-only token, a backend that cannot jog, or the server is away)');
      show('closed', `jog socket closed: ${why}${wasHeld ? '; the arm brakes' : ''}`);
    });
  };
  const closeLater = () => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      if (hold.held === undefined) socket?.close(1000, 'idle');
    }, IDLE_CLOSE_MS);
  };

  /** The server's status message: jogging or not, and why a jog is limited; an error message: why it was refused. */
  const showStatus = (status) => {
    if (status.type === 'error') return show('refused', `refused (${status.status}): ${detailText(status.detail)}`);
    if (status.type !== 'status') return;
    const reason = limitText(status.limit);
    // The last status of a jog: it has ended, at rest (`jogging` may still be true in that one message).
    if (status.ended) {
      // A stop from anywhere lets go of the held button, as the event stream's stop does (the stream may be away):
      // else the next tick of the hold would start a new jog once the stop has answered. A new jog needs a new press.
      if (status.ended === 'stop') stopped();
      const why = status.ended === 'limit' && reason ? `limit: ${reason}` : status.ended;
      return show(status.ended === 'limit' ? 'limited' : 'idle', `at rest (ended: ${why})`);
    }
    if (reason) return show('limited', `limited: ${reason}`);
    if (hold.held !== undefined) return show('jogging', `jogging ${hold.held}${status.paused ? ' (paused)' : ''}`);
    if (status.jogging || status.moving) return show('braking', 'released: braking to rest');
    show('idle', 'at rest');
  };

  const bind = (button, key, command) => {
    whileHeld(button, {
      start: () => {
        if (!armed()) return refuse(button);
        openSocket();
        hold.press(key, command());
        show('jogging', `jogging ${key}`);
      },
      end: () => {
        if (!hold.release()) return;
        closeLater();
        show('braking', 'released: braking to rest');
      },
    });
  };
  const row = (label, key, name, command) => {
    const line = document.createElement('div');
    line.className = 'jog-row';
    const title = document.createElement('span');
    title.className = 'jog-label';
    title.textContent = label;
    line.append(title);
    for (const [sign, text] of [
      [-1, '−'],
      [1, '+'],
    ]) {
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = text;
      button.dataset.jog = `${key}${sign < 0 ? '-' : '+'}`;
      button.dataset.control = '';
      button.setAttribute('aria-label', `Jog ${name} ${sign < 0 ? 'minus' : 'plus'} (hold)`);
      bind(button, button.dataset.jog, () => command(sign));
      line.append(button);
    }
    return line;
  };
  const joints = root.querySelector('[data-jog-joints]');
  for (let j = 0; j < JOINT_COUNT; j++)
    joints.append(row(`J${j + 1}`, `J${j + 1}`, `joint ${j + 1}`, (sign) => jointCommand(j, sign, speed(), TTL_MS)));
  const axes = root.querySelector('[data-jog-axes]');
  for (const axis of AXES)
    axes.append(
      row(AXIS_NAMES[axis][0], axis, AXIS_NAMES[axis][1], (sign) => axisCommand(axis, sign, speed(), frame(), TTL_MS)),
    );
  show('idle', 'at rest');

  return { stopped };
}

/** The subprotocol the server answers with; the token rides in a second one. */
const PROTOCOL = 'armgate.jog.v1';

/** base64url of the token's UTF-8 bytes, without padding (a subprotocol value allows no '+', '/' or '='). */
function base64url(text) {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** A limit in force ({kind, detail}, or a sentence) in words; undefined when none. */
function limitText(limit) {
  if (!limit) return undefined;
  if (typeof limit === 'string') return limit;
  return [limit.kind?.replace('_', ' '), limit.detail].filter(Boolean).join(': ');
}

/** An error's detail: a sentence, or the validation issues (their messages). */
function detailText(detail) {
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) return detail.map((issue) => issue.msg ?? JSON.stringify(issue)).join('; ');
  return JSON.stringify(detail);
}

function defaultUrl() {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/robot/jog`;
}

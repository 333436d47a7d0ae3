// What a held button does on the live page, apart from the page and the socket (tests/ui/hold.test.ts):
// - jogHold: the jog dead-man. A held command is sent at once and again every ttl/4 (well inside the ttl the
//   server brakes at), a release sends the zero command that brakes the arm, a closed link forgets the hold.
// - holdToRun: a button that sends the arm somewhere acts only after it has been held `holdMs`; let go sooner,
//   nothing is sent.
// The link (`send`, a WebSocket on the page) and the timers are handed in.

/** The joints a jog commands (J1..J7) and the Cartesian axes (x y z linear, a b c angular about x y z). */
export const JOINT_COUNT = 7;
export const AXES = ['x', 'y', 'z', 'a', 'b', 'c'];

/** A joint jog: joint `index` (0-based) at `sign * speed` of its jog speed, the others still. */
export function jointCommand(index, sign, speed, ttlMs) {
  const joints = Array.from({ length: JOINT_COUNT }, (_, j) => (j === index ? sign * speed : 0));
  return { joints, ttl_ms: ttlMs };
}

/** A Cartesian jog along or about one axis of `frame` ('base' or 'tool'), at `sign * speed` of the TCP's jog speed. */
export function axisCommand(axis, sign, speed, frame, ttlMs) {
  const i = AXES.indexOf(axis);
  if (i < 0) throw new Error(`unknown axis ${axis}`);
  const linear = [0, 0, 0];
  const angular = [0, 0, 0];
  (i < 3 ? linear : angular)[i % 3] = sign * speed;
  return { linear, angular, frame, ttl_ms: ttlMs };
}

/** All zeros: the arm brakes to rest at once (sent on release, not left to the ttl). */
export function restCommand(ttlMs) {
  return { joints: Array.from({ length: JOINT_COUNT }, () => 0), ttl_ms: ttlMs };
}

/**
 * The dead-man of the jog buttons. `press(key, command)` holds `command` (the key names the button: a key press's
 * auto-repeat is the same key and changes nothing; another key replaces the command); `release()` lets go (the zero
 * command goes out); `linkClosed()` forgets the hold without sending (the server brakes when its socket closes).
 * `send(command)` answers false when the link cannot take it now (still opening): the next tick sends it.
 */
export function jogHold({ send, ttlMs, timers = globalThis }) {
  const periodMs = Math.max(10, Math.floor(ttlMs / 4));
  let held;
  let command;
  let interval;
  const stopTicking = () => {
    if (interval !== undefined) timers.clearInterval(interval);
    interval = undefined;
  };
  return {
    periodMs,
    get held() {
      return held;
    },
    press(key, next) {
      if (held === key) return false;
      held = key;
      command = next;
      send(command);
      if (interval === undefined) interval = timers.setInterval(() => send(command), periodMs);
      return true;
    },
    /** Re-sends the held command now (the link has just opened); false when nothing is held. */
    resend() {
      if (held === undefined) return false;
      send(command);
      return true;
    },
    release() {
      if (held === undefined) return false;
      held = undefined;
      command = undefined;
      stopTicking();
      send(restCommand(ttlMs));
      return true;
    },
    linkClosed() {
      const was = held !== undefined;
      held = undefined;
      command = undefined;
      stopTicking();
      return was;
    },
  };
}

/**
 * Hold to run: `press(run)` starts the count, `run()` is called once `holdMs` later if the button is still held;
 * `release()` before then cancels it and answers 'short' (tell the user to hold), after it 'ran'; 'idle' when
 * nothing was pressed.
 */
export function holdToRun({ holdMs, timers = globalThis }) {
  let timer;
  let ran = false;
  let pressed = false;
  return {
    holdMs,
    press(run) {
      if (pressed) return;
      pressed = true;
      ran = false;
      timer = timers.setTimeout(() => {
        timer = undefined;
        ran = true;
        run();
      }, holdMs);
    },
    release() {
      if (!pressed) return 'idle';
      pressed = false;
      if (timer !== undefined) timers.clearTimeout(timer);
      timer = undefined;
      return ran ? 'ran' : 'short';
    },
  };
}

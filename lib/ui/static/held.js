// A button held down, by pointer or key, on the live page: `start` when it goes down (the primary pointer
// button, or Space / Enter on the focused button: a key's auto-repeat is ignored), `end(why)` once when it is
// let go, the pointer leaves it, the button loses focus, the page loses focus or is hidden, or `releaseAll`
// is called (STOP, Esc, a stop from elsewhere). A click alone does nothing: the action is in start/end.
const holding = new Set();

/** Lets go of every held button (`why` is passed to each `end`). */
export function releaseAll(why) {
  for (const release of [...holding]) release(why);
}

window.addEventListener('blur', () => releaseAll('page lost focus'));
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState !== 'visible') releaseAll('page hidden');
});

const HOLD_KEYS = new Set([' ', 'Enter']);

export function whileHeld(button, { start, end }) {
  let down = false;
  const release = (why) => {
    if (!down) return;
    down = false;
    holding.delete(release);
    button.classList.remove('held');
    end(why);
  };
  const press = () => {
    if (down) return;
    down = true;
    holding.add(release);
    button.classList.add('held');
    start();
  };
  button.addEventListener('pointerdown', (event) => {
    if (event.button !== 0) return;
    // A touch captures its pointer to the button; released, leaving the button ends the hold as with a mouse.
    if (button.hasPointerCapture(event.pointerId)) button.releasePointerCapture(event.pointerId);
    button.focus({ preventScroll: true });
    press();
  });
  button.addEventListener('pointerup', () => release('released'));
  button.addEventListener('pointerleave', () => release('left the button'));
  button.addEventListener('pointercancel', () => release('pointer cancelled'));
  button.addEventListener('blur', () => release('lost focus'));
  button.addEventListener('contextmenu', (event) => event.preventDefault());
  button.addEventListener('keydown', (event) => {
    if (!HOLD_KEYS.has(event.key)) return;
    event.preventDefault();
    if (!event.repeat) press();
  });
  button.addEventListener('keyup', (event) => {
    if (!HOLD_KEYS.has(event.key)) return;
    event.preventDefault();
    release('released');
  });
  return release;
}

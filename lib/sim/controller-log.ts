import { type ControllerEvent, describeClip } from './controller.ts';

/** One log line for a controller event. */
export function describeControllerEvent(event: ControllerEvent): string {
  switch (event.kind) {
    case 'accepted':
      return `controller: accepted trajectory #${event.id} (${event.points} points, ${event.durationS.toFixed(3)} s)`;
    case 'refused':
      return `controller: refused a trajectory: ${event.reason}`;
    case 'preempted':
      return `controller: trajectory #${event.id} preempted by a newer one`;
    case 'finished':
      return `controller: trajectory #${event.id} finished`;
    case 'cancelled':
      return `controller: trajectory #${event.id} cancelled; decelerating`;
    case 'hold-request':
      return 'controller: hold point received; decelerating to a stop';
    case 'paused':
      return `controller: trajectory #${event.id} paused at rest on its path [${event.positions.map((q) => q.toFixed(4)).join(', ')}]`;
    case 'hold':
      return `controller: holding position [${event.positions.map((q) => q.toFixed(4)).join(', ')}]`;
    case 'clipped':
      return `controller: ${describeClip(event)}`;
    case 'jog':
      return `controller: jog ${event.state}${event.reason ? ` (${event.reason})` : ''} at [${event.positions.map((q) => q.toFixed(4)).join(', ')}]`;
  }
}

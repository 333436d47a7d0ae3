import { tmpdir } from 'node:os';
import { composeServices } from '../../lib/app/compose.ts';
import type { Services } from '../../lib/app/services.ts';
import type { Arrival, Principal } from '../../lib/core/roles.ts';
import type { RestCall } from '../../lib/http/rest.ts';
import type { RobotContext } from '../../lib/ros/context.ts';

/**
 * Fresh app services over `context`, composed as start-up composes them (lib/app/compose.ts) but without an event
 * bus, envelope, audit trail, taught positions or jog, and not listening to the context (which may be a stand-in),
 * for handlers called alone.
 */
export function servicesFor(context: RobotContext): Services {
  return composeServices(context, { bagRoot: tmpdir() }).services;
}

/** The caller of a handler called alone in a test: what the app's authentication would hand the face. */
export const TEST_CALLER: Principal = { name: 'test', role: 'admin' };

/** The call facts of a request that passed authentication (as TEST_CALLER), for a mounted route called alone. */
export const TEST_ARRIVAL: Arrival = { caller: TEST_CALLER, arrivedAtStop: undefined };

/** What the app hands a REST handler with a request: fresh services over `context`, the context, TEST_CALLER. */
export function callFor(context: RobotContext): RestCall {
  return { services: servicesFor(context), ros: context, caller: TEST_CALLER };
}

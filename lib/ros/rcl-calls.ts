import { err, ok, type Result } from '../result.ts';
import type { InterfaceUnavailable } from './context.ts';
import type { RclActionClient, RclClient, RclModule, RclNode } from './rclnodejs-api.ts';
import { type Outcome, settle } from './settle.ts';

/** A ROS interface of the endpoints file: its name and type (pkg/msg|srv|action/Type). */
export interface Iface {
  readonly name: string;
  readonly type: string;
}

/** An `unavailable` error naming the interface. */
export function unavailable(iface: string, message: string): InterfaceUnavailable {
  return { kind: 'unavailable', iface, message };
}

/** The fully qualified form of a name in the root namespace (`cobot/stop` -> `/cobot/stop`). */
export function rosName(name: string): string {
  return name.startsWith('/') || name.startsWith('~') ? name : `/${name}`;
}

/** A hidden name (a segment starting with `_`, such as an action's `_action/status`), as `ros2 topic list` hides them. */
export function isHiddenName(name: string): boolean {
  return name.split('/').some((segment) => segment.startsWith('_'));
}

/**
 * Service and action clients of armgate's node, created once per interface and kept; creation
 * errors (a type that is not installed) are kept too and reported on each use. Each call first
 * waits for its server (`timeouts.server_wait_s`), so a missing server is an `unavailable` error
 * naming the interface.
 */
export class RclCalls {
  private readonly node: RclNode;
  private readonly rcl: RclModule;
  private readonly serverWaitS: number;
  private readonly clients = new Map<string, Result<RclClient, string>>();
  private readonly actions = new Map<string, Result<RclActionClient, string>>();

  constructor(node: RclNode, rcl: RclModule, serverWaitS: number) {
    this.node = node;
    this.rcl = rcl;
    this.serverWaitS = serverWaitS;
  }

  /** The service client for `iface`, created on first use. */
  client(iface: Iface): Result<RclClient, string> {
    const key = `${iface.type} ${iface.name}`;
    let client = this.clients.get(key);
    if (!client) {
      try {
        client = ok(this.node.createClient(iface.type, iface.name));
      } catch (e) {
        client = err(`cannot create a ${iface.type} client: ${(e as Error).message}`);
      }
      this.clients.set(key, client);
    }
    return client;
  }

  /** The action client for `iface`, created on first use. */
  actionClient(iface: Iface): Result<RclActionClient, string> {
    const key = `${iface.type} ${iface.name}`;
    let client = this.actions.get(key);
    if (!client) {
      try {
        client = ok(new this.rcl.ActionClient(this.node, iface.type, iface.name));
      } catch (e) {
        client = err(`cannot create a ${iface.type} action client: ${(e as Error).message}`);
      }
      this.actions.set(key, client);
    }
    return client;
  }

  /**
   * Waits (server_wait_s, or `serverWaitS`) for the server of `iface`; `what` names the kind of interface in the
   * message. With `serverWaitS` 0 a server that is not there now is an error at once.
   */
  async waitForServer(
    iface: Iface,
    what: string,
    kind: 'service' | 'action',
    serverWaitS = this.serverWaitS,
  ): Promise<Result<RclClient | RclActionClient, InterfaceUnavailable>> {
    const client = kind === 'service' ? this.client(iface) : this.actionClient(iface);
    if (!client.ok) return err(unavailable(iface.name, `${what} ${iface.name}: ${client.error}`));
    const c = client.value;
    const available = 'waitForService' in c ? c.isServiceServerAvailable() : c.isActionServerAvailable();
    if (available) return ok(c);
    if (serverWaitS <= 0)
      return err(unavailable(iface.name, `${what} ${iface.name} (${iface.type}) is not available (not waited for)`));
    const waitMs = serverWaitS * 1000;
    const waited = await settle(
      'waitForService' in c ? c.waitForService(waitMs) : c.waitForServer(waitMs),
      waitMs + 1000,
    );
    if (waited.kind === 'value' && waited.value) return ok(c);
    return err(
      unavailable(
        iface.name,
        `${what} ${iface.name} (${iface.type}) is not available: no server within ${serverWaitS} s`,
      ),
    );
  }

  /**
   * Sends a service request once the server is there and waits for the answer at most
   * `timeoutMs` and until `signal` aborts. The outcome says which came first.
   */
  async request(
    iface: Iface,
    what: string,
    request: object,
    timeoutMs: number,
    signal?: AbortSignal,
    serverWaitS = this.serverWaitS,
  ): Promise<Result<Outcome<unknown>, InterfaceUnavailable>> {
    const ready = await this.waitForServer(iface, what, 'service', serverWaitS);
    if (!ready.ok) return ready;
    const client = ready.value as RclClient;
    const answer = new Promise<unknown>((resolve, reject) => {
      try {
        client.sendRequest(request, resolve);
      } catch (e) {
        reject(e);
      }
    });
    return ok(await settle(answer, timeoutMs, signal));
  }

  /**
   * A service call that can be abandoned: the answer, or the abort's reason; a timeout or a failure
   * is an `unavailable` error naming the interface.
   */
  async callOrAbort(
    iface: Iface,
    what: string,
    request: object,
    timeoutMs: number,
    signal?: AbortSignal,
    serverWaitS = this.serverWaitS,
  ): Promise<Result<{ readonly value: unknown } | { readonly aborted: string }, InterfaceUnavailable>> {
    const outcome = await this.request(iface, what, request, timeoutMs, signal, serverWaitS);
    if (!outcome.ok) return outcome;
    const o = outcome.value;
    if (o.kind === 'value') return ok({ value: o.value });
    if (o.kind === 'aborted') return ok({ aborted: o.reason });
    const why =
      o.kind === 'timeout'
        ? `did not answer within ${Number((timeoutMs / 1000).toFixed(3))} s`
        : `failed: ${o.message}`;
    return err(unavailable(iface.name, `${what} ${iface.name} ${why}`));
  }

  /** A service call whose timeout or failure is an `unavailable` error naming the interface. */
  async call(
    iface: Iface,
    what: string,
    request: object,
    timeoutMs: number,
    serverWaitS = this.serverWaitS,
  ): Promise<Result<unknown, InterfaceUnavailable>> {
    const answer = await this.callOrAbort(iface, what, request, timeoutMs, undefined, serverWaitS);
    if (!answer.ok) return answer;
    return 'value' in answer.value
      ? ok(answer.value.value)
      : err(unavailable(iface.name, `${what} ${iface.name} ${answer.value.aborted}`));
  }
}

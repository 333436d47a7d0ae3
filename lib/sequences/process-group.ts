/**
 * The processes of a runner's process group. A runner is forked as a group leader so that stop
 * and shutdown can signal everything it started; once it has exited, whatever is left of its group
 * is killed, and the run counts as finished only when no member is still alive.
 *
 * "Alive" excludes zombies: a member that has died but whose parent (after the runner's exit, the
 * system's init) has not yet collected its exit status holds no resources and runs nothing. On
 * Linux the group's members are read from /proc; elsewhere kill(-pgid, 0) is the only probe and a
 * zombie counts as alive.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** The state letter of a /proc/PID/stat line (R, S, D, Z, ...) and its process group, or undefined. */
export function parseProcStat(line: string): { state: string; pgid: number } | undefined {
  // The command name (field 2) is in parentheses and may itself contain spaces or parentheses.
  const close = line.lastIndexOf(')');
  if (close < 0) return undefined;
  const fields = line.slice(close + 2).split(' ');
  const state = fields[0];
  const pgid = Number(fields[2]);
  if (!state || !Number.isInteger(pgid)) return undefined;
  return { state, pgid };
}

/** True while some member of process group `pgid` is alive (not a zombie). */
export function groupAlive(pgid: number): boolean {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return signalProbe(pgid);
  }
  for (const name of entries) {
    let line: string;
    try {
      line = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // exited while we looked
    }
    const stat = parseProcStat(line);
    if (stat && stat.pgid === pgid && stat.state !== 'Z' && stat.state !== 'X') return true;
  }
  return false;
}

function signalProbe(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Sends `signal` to process group `pgid`; a group that is gone already is not an error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // The group is gone already.
  }
}

/**
 * Once a group's leader has exited: SIGKILL to what is left of the group, then waits until no
 * member is alive, for at most `timeoutMs`. Resolves whether the group is gone.
 */
export async function reapGroup(pgid: number, timeoutMs: number): Promise<boolean> {
  signalGroup(pgid, 'SIGKILL');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!groupAlive(pgid)) return true;
    if (Date.now() >= deadline) return false;
    await sleep(5);
  }
}

/**
 * Message definitions from the installed ROS 2 interface packages: `<prefix>/share/<pkg>/msg/<Type>.msg`
 * for each prefix of AMENT_PREFIX_PATH, first match wins (as ament_index does). The file text is
 * taken verbatim, comments included, as rosbag2's LocalMessageDefinitionSource stores it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { err, ok, type Result } from '../result.ts';
import { assembleDefinition, builtinMsgLookup, MESSAGE_TYPE, type MsgLookup } from './definitions.ts';

/** A package or type name: nothing that could leave `share/<pkg>/msg`. */
const NAME = /^[A-Za-z0-9_]+$/;
/** Largest .msg file read (interface files are a few KiB). */
const MAX_MSG_BYTES = 256 * 1024;

/** The install prefixes named by AMENT_PREFIX_PATH (absolute paths only, in order). */
export function amentPrefixes(env: Readonly<Record<string, string | undefined>>): string[] {
  return (env.AMENT_PREFIX_PATH ?? '').split(path.delimiter).filter((p) => p !== '' && path.isAbsolute(p));
}

/** A lookup reading `<prefix>/share/<pkg>/msg/<name>.msg` under `prefixes`; each file is read once. */
export function installedMsgLookup(prefixes: readonly string[]): MsgLookup {
  const cache = new Map<string, string | undefined>();
  return (pkg, name) => {
    if (!NAME.test(pkg) || !NAME.test(name)) return undefined;
    const key = `${pkg}/${name}`;
    if (cache.has(key)) return cache.get(key);
    let text: string | undefined;
    for (const prefix of prefixes) {
      try {
        const buffer = readFileSync(path.join(prefix, 'share', pkg, 'msg', `${name}.msg`));
        if (buffer.byteLength > MAX_MSG_BYTES) continue;
        text = buffer.toString('utf8');
        break;
      } catch {
        // Not in this prefix.
      }
    }
    cache.set(key, text);
    return text;
  };
}

/** A complete `ros2msg` definition and where its .msg texts came from. */
export interface InstalledDefinition {
  readonly text: string;
  readonly from: 'installed' | 'built-in';
}

/**
 * Where bag schemas come from: the installed interface packages first (the definitions of the
 * stack actually running), then armgate's built-in table. Results are cached per type.
 */
export class DefinitionSource {
  private readonly installed: MsgLookup;
  private readonly prefixes: readonly string[];
  private readonly cache = new Map<string, Result<InstalledDefinition, string>>();

  constructor(prefixes: readonly string[]) {
    this.prefixes = prefixes;
    this.installed = installedMsgLookup(prefixes);
  }

  /** From AMENT_PREFIX_PATH in `env`. */
  static fromEnv(env: Readonly<Record<string, string | undefined>>): DefinitionSource {
    return new DefinitionSource(amentPrefixes(env));
  }

  /** The complete definition of `type` (`pkg/msg/Type`) and where it came from, or why there is none. */
  definition(type: string): Result<InstalledDefinition, string> {
    let result = this.cache.get(type);
    if (result) return result;
    const installed = assembleDefinition(type, this.installed);
    if (installed.ok) result = ok({ text: installed.value, from: 'installed' });
    else if (!MESSAGE_TYPE.test(type)) result = installed;
    else {
      const builtin = assembleDefinition(type, builtinMsgLookup);
      const where =
        this.prefixes.length === 0
          ? 'AMENT_PREFIX_PATH names no install prefix'
          : `looked in share/<pkg>/msg under ${this.prefixes.join(', ')}`;
      result = builtin.ok ? ok({ text: builtin.value, from: 'built-in' }) : err(`${installed.error} (${where})`);
    }
    this.cache.set(type, result);
    return result;
  }
}

/**
 * The robot stack's own `foxglove` block (the settings foxglove_bridge is launched with) and armgate's
 * `armgate.foxglove` caps: what the Foxglove WebSocket server of lib/foxglove serves, where and to whom.
 * The block is the stack's: keys armgate does not use are left to the stack (a notice names them).
 */
import * as v from 'valibot';
import { err, ok, type Result } from '../result.ts';
import { count, flag, nonEmptyText, port } from './fields.ts';

/** A list of regular expressions, each matched against a whole name (as foxglove_bridge does, std::regex_match). */
const patterns = v.pipe(
  v.array(
    v.pipe(v.string('expected a regular expression'), v.maxLength(1024, 'at most 1024 characters')),
    'expected a list of regular expressions',
  ),
  v.maxLength(256, 'at most 256 patterns'),
);

/** The capabilities foxglove_bridge knows (its `capabilities` parameter). */
const CAPABILITIES = [
  'clientPublish',
  'parameters',
  'parametersSubscribe',
  'services',
  'connectionGraph',
  'assets',
  'time',
] as const;

/**
 * Bytes queued for one Foxglove client beyond which it is dropped, by default: 1 MiB, a few seconds of every channel
 * for a client that lags (the Foxglove SDK's server keeps 1,024 messages per client; foxglove_bridge's older
 * send_buffer_limit is 10 MB, which 100 clients that never read would hold as 1 GB).
 */
export const SEND_BUFFER_LIMIT = 1_048_576;

/**
 * The stack's `foxglove` block, with foxglove_bridge's defaults (address: loopback, see docs/foxglove.md) but for
 * send_buffer_limit, armgate's own.
 */
export const FoxgloveBlockSchema = v.looseObject({
  enabled: flag(false),
  port: v.optional(port, 8765),
  address: v.optional(nonEmptyText('a host name or address'), '127.0.0.1'),
  tls: flag(false),
  certfile: v.optional(v.string('expected a file path'), ''),
  keyfile: v.optional(v.string('expected a file path'), ''),
  topic_whitelist: v.optional(patterns, ['.*']),
  service_whitelist: v.optional(patterns, ['.*']),
  param_whitelist: v.optional(patterns, ['.*']),
  capabilities: v.optional(
    v.array(v.picklist(CAPABILITIES, `expected one of ${CAPABILITIES.join(', ')}`), 'expected a list of capabilities'),
    [...CAPABILITIES],
  ),
  // armgate's default, not foxglove_bridge's 10 MB: 100 clients that never read would hold 1 GB (docs/foxglove.md).
  send_buffer_limit: count('bytes', 65_536, 1_000_000_000, SEND_BUFFER_LIMIT, ' bytes'),
});

/**
 * armgate.foxglove: armgate's own settings of its Foxglove server. `enabled` and `port`, when given, take the place of
 * the stack's block's for armgate only: beside the stack's own foxglove_bridge (which its launch file starts on the
 * block's port when the block says enabled), armgate serves on a port of its own.
 */
export const ArmgateFoxgloveSchema = v.strictObject({
  enabled: v.optional(v.boolean('expected true or false')),
  port: v.optional(port),
  max_connections: count('connections', 1, 10_000, 100),
});

/** The Foxglove server's settings, validated (the whitelists compiled). */
export interface FoxgloveConfig {
  readonly host: string;
  readonly port: number;
  /** TLS: the certificate chain and key files (PEM), read at start-up; undefined: plain ws://. */
  readonly tls: { readonly certFile: string; readonly keyFile: string } | undefined;
  readonly topicWhitelist: readonly RegExp[];
  readonly serviceWhitelist: readonly RegExp[];
  readonly paramWhitelist: readonly RegExp[];
  /** The capabilities the block allows (armgate serves services, assets and parameters of them). */
  readonly capabilities: ReadonlySet<string>;
  /** Bytes queued for one client beyond which it is dropped (foxglove_bridge's send_buffer_limit). */
  readonly sendBufferLimit: number;
  /** Connections served at once; beyond, the upgrade is refused (503). */
  readonly maxConnections: number;
}

/** Compiles a whitelist: each pattern must match a whole name. */
function compile(list: readonly string[], key: string): Result<RegExp[], string> {
  const out: RegExp[] = [];
  for (const [i, pattern] of list.entries()) {
    try {
      out.push(new RegExp(`^(?:${pattern})$`));
    } catch (e) {
      return err(`${key}.${i}: not a regular expression (${(e as Error).message.slice(0, 120)})`);
    }
  }
  return ok(out);
}

/** True when some pattern of `list` matches the whole `name`. */
export function allowedBy(list: readonly RegExp[], name: string): boolean {
  return list.some((re) => re.test(name));
}

/**
 * The Foxglove server's settings from the stack's block and armgate's own; undefined when neither enables it
 * (armgate.foxglove.enabled, else the block's `enabled`). `resolvePath` turns certfile/keyfile into absolute paths (relative to the settings file).
 */
export function foxgloveConfig(
  block: unknown,
  own: v.InferOutput<typeof ArmgateFoxgloveSchema>,
  resolvePath: (file: string) => string,
  notices: string[],
): Result<FoxgloveConfig | undefined, string> {
  if ((block === undefined || block === null) && own.enabled !== true) return ok(undefined);
  const parsed = v.safeParse(FoxgloveBlockSchema, block ?? {});
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const keys = (issue?.path ?? []).map((item) => String(item.key));
    return err(`${['foxglove', ...keys].join('.')}: ${issue?.message ?? 'invalid'}`);
  }
  const f = parsed.output;
  if (!(own.enabled ?? f.enabled)) return ok(undefined);
  const topics = compile(f.topic_whitelist, 'foxglove.topic_whitelist');
  if (!topics.ok) return topics;
  const services = compile(f.service_whitelist, 'foxglove.service_whitelist');
  if (!services.ok) return services;
  const params = compile(f.param_whitelist, 'foxglove.param_whitelist');
  if (!params.ok) return params;
  let tls: FoxgloveConfig['tls'];
  if (f.tls) {
    if (f.certfile === '' || f.keyfile === '')
      return err(`foxglove.${f.certfile === '' ? 'certfile' : 'keyfile'}: required when foxglove.tls is true`);
    tls = { certFile: resolvePath(f.certfile), keyFile: resolvePath(f.keyfile) };
  }
  const known = new Set(Object.keys(FoxgloveBlockSchema.entries));
  const left = Object.keys(f).filter((k) => !known.has(k));
  if (left.length > 0)
    notices.push(`foxglove: ${left.join(', ')}: foxglove_bridge settings armgate's Foxglove server does not use`);
  if (f.capabilities.includes('clientPublish'))
    notices.push(
      "foxglove.capabilities: clientPublish is not served by armgate (use the services; the stack's bridge publishes)",
    );
  return ok({
    host: f.address,
    port: own.port ?? f.port,
    tls,
    topicWhitelist: topics.value,
    serviceWhitelist: services.value,
    paramWhitelist: params.value,
    capabilities: new Set(f.capabilities),
    sendBufferLimit: f.send_buffer_limit,
    maxConnections: own.max_connections,
  });
}

/**
 * The rosbag2 `metadata.yaml` of a single-file MCAP bag, and the QoS text rosbag2 keeps per topic.
 *
 * Written as metadata format version 5 (the Humble layout), which every rosbag2 since Humble reads:
 * version 5 has `files` but none of the later fields (custom_data: 6, type_description_hash: 7,
 * ros_distro: 8, offered_qos_profiles as a YAML list with policy names: 9). Up to version 8,
 * `offered_qos_profiles` is a string holding a YAML list with the rmw policies as integers, the same
 * text rosbag2_storage_mcap puts in each channel's metadata.
 */
import { stringify } from 'yaml';

/** rmw duration "infinite" as rosbag2 serializes it: RMW_DURATION_INFINITE (INT64_MAX ns) in sec/nsec. */
const INFINITE = '    sec: 9223372036\n    nsec: 854775807';

/**
 * How a publisher keeps its messages for late subscribers: `volatile` (a default publisher: none) or
 * `transient_local` (the last messages stay for subscribers that join later, as robot_state_publisher
 * offers /robot_description and tf2's static broadcaster /tf_static).
 */
export type Durability = 'volatile' | 'transient_local';

/** rmw_qos_durability_policy_t: TRANSIENT_LOCAL is 1, VOLATILE 2. */
const DURABILITY_POLICY: Readonly<Record<Durability, number>> = { transient_local: 1, volatile: 2 };

/**
 * The offered_qos_profiles text of one publisher with `durability`: history unknown (3), depth 0,
 * reliable (1), infinite deadline and lifespan, automatic liveliness (1), as rosbag2 records what
 * a publisher offers (the graph reports neither history nor depth). Playback adapts it with the
 * default history, and re-offers transient local to late subscribers.
 */
export function offeredQosProfiles(durability: Durability = 'volatile'): string {
  return [
    '- history: 3',
    '  depth: 0',
    '  reliability: 1',
    `  durability: ${DURABILITY_POLICY[durability]}`,
    `  deadline:\n${INFINITE}`,
    `  lifespan:\n${INFINITE}`,
    '  liveliness: 1',
    `  liveliness_lease_duration:\n${INFINITE}`,
    '  avoid_ros_namespace_conventions: false',
  ].join('\n');
}

/** The offered_qos_profiles of a default (volatile) publisher. */
export const OFFERED_QOS_PROFILES: string = offeredQosProfiles('volatile');

/** Metadata format version written by {@link bagMetadataYaml}. */
export const BAG_METADATA_VERSION = 5;

/** What a finished bag file holds, for its metadata.yaml. */
export interface BagSummary {
  /** The bag file's name relative to the bag folder, e.g. `run_0.mcap`. */
  readonly fileName: string;
  /** Earliest and latest receive (log) time, ns since the epoch; both 0n when there are no messages. */
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly messageCount: number;
  readonly topics: readonly {
    readonly name: string;
    readonly type: string;
    readonly messageCount: number;
    /** What the recorded publisher offered; default volatile. */
    readonly durability?: Durability;
  }[];
}

/**
 * The metadata.yaml text of a one-file MCAP bag, under the top-level key
 * `rosbag2_bagfile_information` as rosbag2's MetadataIo writes it. Times are exact integers
 * (ns since the epoch need more than 53 bits).
 */
export function bagMetadataYaml(summary: BagSummary): string {
  const duration = { nanoseconds: summary.endNs - summary.startNs };
  const startingTime = { nanoseconds_since_epoch: summary.startNs };
  const info = {
    version: BAG_METADATA_VERSION,
    storage_identifier: 'mcap',
    duration,
    starting_time: startingTime,
    message_count: summary.messageCount,
    topics_with_message_count: summary.topics.map((topic) => ({
      topic_metadata: {
        name: topic.name,
        type: topic.type,
        serialization_format: 'cdr',
        offered_qos_profiles: offeredQosProfiles(topic.durability),
      },
      message_count: topic.messageCount,
    })),
    compression_format: '',
    compression_mode: '',
    relative_file_paths: [summary.fileName],
    files: [{ path: summary.fileName, starting_time: startingTime, duration, message_count: summary.messageCount }],
  };
  return stringify({ rosbag2_bagfile_information: info }, { lineWidth: 0, aliasDuplicateObjects: false });
}

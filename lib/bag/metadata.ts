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
 * One offered QoS profile: history unknown (3), depth 0, reliable (1), volatile (2), infinite
 * deadline and lifespan, automatic liveliness (1): what a default rclcpp publisher offers, as
 * rosbag2 records it. Playback adapts it with the default history.
 */
export const OFFERED_QOS_PROFILES: string = [
  '- history: 3',
  '  depth: 0',
  '  reliability: 1',
  '  durability: 2',
  `  deadline:\n${INFINITE}`,
  `  lifespan:\n${INFINITE}`,
  '  liveliness: 1',
  `  liveliness_lease_duration:\n${INFINITE}`,
  '  avoid_ros_namespace_conventions: false',
].join('\n');

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
        offered_qos_profiles: OFFERED_QOS_PROFILES,
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
